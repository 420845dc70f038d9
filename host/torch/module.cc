// epic_torch._C: the Python side of the "epic" backend — ProcessGroupEpic as a subclass of
// torch's ProcessGroup type, and the counters of what every group offloaded. The package
// (epic_torch/__init__.py) registers the backend with torch.distributed and prints the
// counters at exit. Built against torch's pybind11 (2.10, PYBIND11_INTERNALS_VERSION 4), so
// that torch's Store and ProcessGroup objects cross between the two modules.
#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "host/torch/inc_link.h"
#include "host/torch/offload_stats.h"
#include "host/torch/process_group_epic.h"

namespace py = pybind11;
using epic::torch_backend::BackendOptions;
using epic::torch_backend::OffloadStats;
using epic::torch_backend::ProcessGroupEpic;

namespace {

c10::intrusive_ptr<ProcessGroupEpic> create(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                            int size, double timeout_s,
                                            const c10::intrusive_ptr<c10d::ProcessGroup>& gloo,
                                            const std::string& torch_group, uint32_t pg_index) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  return c10::make_intrusive<ProcessGroupEpic>(store, rank, size, timeout, gloo, torch_group,
                                               pg_index, BackendOptions::from_env());
}

py::list rows(const OffloadStats& s) {
  py::list out;
  for (const auto& r : s.rows()) {
    py::dict d;
    d["collective"] = r.collective;
    d["path"] = epic::torch_backend::to_string(r.path);
    d["reason"] = r.reason;
    d["calls"] = r.calls;
    d["bytes"] = r.bytes;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "EPIC's torch.distributed backend (use: import epic_torch)";
  py::module_::import("torch.distributed");  // registers the ProcessGroup base type

  py::class_<OffloadStats, std::shared_ptr<OffloadStats>>(m, "OffloadStats")
      .def_property_readonly("label", &OffloadStats::label)
      .def_property_readonly("state", &OffloadStats::state)
      .def_property_readonly("state_reason", &OffloadStats::state_reason)
      .def("rows", &rows);

  py::class_<ProcessGroupEpic, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupEpic>>(
      m, "ProcessGroupEpic")
      .def_property_readonly("group_name", &ProcessGroupEpic::group_name)
      .def_property_readonly("offloading", &ProcessGroupEpic::offloading)
      .def_property_readonly("stats", &ProcessGroupEpic::stats)
      .def("describe", &ProcessGroupEpic::describe)
      .def("shutdown", &ProcessGroupEpic::shutdown, py::call_guard<py::gil_scoped_release>());

  m.def("create", &create, py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout_s"),
        py::arg("gloo"), py::arg("torch_group"), py::arg("pg_index"),
        py::call_guard<py::gil_scoped_release>(),
        "Joins the manager group (blocking) and returns the process group.");
  m.attr("QPN_STRIDE") = epic::torch_backend::kQpnStride;
}
