// The MPI entry points libepic_mpi.so defines in front of Open MPI's (PMPI interposition:
// the program's calls of MPI_X reach these, the real implementation stays callable as PMPI_X).
//
// MPI_Init / MPI_Init_thread set up MPI_COMM_WORLD's EPIC group (CommRegistry); MPI_Finalize
// leaves every group and prints the report. The six collectives ask decision.h whether EPIC
// can run them, run them through the communicator's libinc Communicator when it can, and call
// PMPI_X otherwise — or, with EPIC_MPI_STRICT=1, fail with MPI_ERR_UNSUPPORTED_OPERATION. An
// EPIC collective that fails (timeout, transport) breaks the communicator's group: that call
// and every later collective on the communicator fail with MPI_ERR_OTHER through the
// communicator's error handler (MPI_ERRORS_ARE_FATAL by default: the job stops with the
// report of what was waited for), never silently switching to MPI, which could hang.
// Buffers: MPI_IN_PLACE inputs are copied first (libinc's send and receive buffers must not
// overlap); Bcast and Allgather of non-dense datatypes go through PMPI_Pack/PMPI_Unpack.
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "host/mpi/comm_registry.h"
#include "host/mpi/decision.h"
#include "host/mpi/report.h"

namespace epic::mpi {
namespace {

using vocab::DType;

// Lives from the first MPI_Init to exit; never destroyed (atexit handlers of the program may
// still call MPI_Finalize after static destructors would have run).
struct Library {
  Report report;
  CommRegistry registry{report};
  bool strict = false;
  bool active = false;  // between MPI_Init and MPI_Finalize, not EPIC_MPI=0
};

Library& lib() {
  static Library* l = new Library;  // NOLINT: deliberately leaked, see above
  return *l;
}

std::string describe(int count, MPI_Datatype t, const char* extra = nullptr) {
  std::string s = std::to_string(count) + " x " + type_name(t);
  if (extra) s += std::string(", ") + extra;
  return s;
}

int fail(Call c, MPI_Comm comm, const std::string& what, const std::string& why, int code) {
  Library& l = lib();
  l.report.failed(c, l.registry.label(comm), what, why);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

// One collective: `why_not` is decision.h's answer ("" = EPIC can run it); `epic` runs it on
// the communicator's libinc Communicator, `pmpi` hands it to MPI.
template <class Epic, class Pmpi>
int collective(Call c, MPI_Comm comm, std::string why_not, const std::string& what, Epic&& epic,
               Pmpi&& pmpi) {
  Library& l = lib();
  if (!l.active || comm == MPI_COMM_NULL) return pmpi();
  if (why_not.empty()) {
    CommState& s = l.registry.get(comm);
    if (!s.broken.empty()) {
      return fail(c, comm, what, "the communicator's EPIC group broke earlier: " + s.broken,
                  MPI_ERR_OTHER);
    }
    if (!s.inc) {
      why_not = "communicator: " + s.why_not;
    } else {
      const inc::Status st = epic(*s.inc);
      if (st.ok()) {
        l.report.offloaded(c, s.label, what);
        return MPI_SUCCESS;
      }
      // libinc refuses arguments before anything is sent (every rank alike, e.g. a type the
      // group's accumulator cannot hold); anything else happened on the wire.
      if (st.code == inc::Code::kInvalidArgument) {
        why_not = "libinc: " + st.message;
      } else {
        s.broken = std::string(inc::to_string(st.code)) + ": " + st.message;
        return fail(c, comm, what, "EPIC: " + s.broken, MPI_ERR_OTHER);
      }
    }
  }
  if (l.strict) {
    return fail(c, comm, what, "cannot be offloaded (EPIC_MPI_STRICT=1): " + why_not,
                MPI_ERR_UNSUPPORTED_OPERATION);
  }
  l.report.fell_back(c, l.registry.label(comm), what, why_not);
  return pmpi();
}

std::string reduction_why(const Reduction& r, int count) {
  if (!r.ok()) return r.why_not;
  if (count <= 0) return "no data (count " + std::to_string(count) + ")";
  return "";
}

std::vector<uint8_t> copy_of(const void* p, size_t bytes) {
  const auto* b = static_cast<const uint8_t*>(p);
  return {b, b + bytes};
}

size_t elem_bytes(DType t) { return vocab::wire_bytes(t); }

// Packs `count` x `t` at `buf` into bytes (non-dense datatypes).
std::vector<uint8_t> pack(const void* buf, int count, MPI_Datatype t, size_t bytes, MPI_Comm comm) {
  std::vector<uint8_t> out(bytes);
  int pos = 0;
  PMPI_Pack(buf, count, t, out.data(), static_cast<int>(bytes), &pos, comm);
  return out;
}

void unpack(const std::vector<uint8_t>& in, void* buf, int count, MPI_Datatype t, MPI_Comm comm) {
  int pos = 0;
  PMPI_Unpack(in.data(), static_cast<int>(in.size()), &pos, buf, count, t, comm);
}

constexpr size_t kMaxPackBytes = 0x7FFFFFFF;  // PMPI_Pack's int sizes

int comm_size(MPI_Comm comm) {
  int n = 0;
  PMPI_Comm_size(comm, &n);
  return n;
}

// After PMPI_Init(_thread): MPI_COMM_WORLD's group, strict mode.
void after_init() {
  Library& l = lib();
  const char* strict = std::getenv("EPIC_MPI_STRICT");
  l.strict = strict && *strict && std::string_view(strict) != "0";
  l.registry.init();
  l.active = !l.registry.disabled();
}

}  // namespace
}  // namespace epic::mpi

using epic::mpi::Call;
using epic::mpi::lib;

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  epic::mpi::after_init();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  epic::mpi::after_init();
  return rc;
}

int MPI_Finalize(void) {
  auto& l = lib();
  if (l.active) {
    l.active = false;
    l.registry.finish();
    l.report.finish();
  }
  return PMPI_Finalize();
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  using namespace epic::mpi;
  const Reduction r = map_reduction(datatype, op);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return collective(
      Call::kAllreduce, comm, reduction_why(r, count),
      describe(count, datatype, in_place ? "MPI_IN_PLACE" : nullptr) + ", " + op_name(op),
      [&](epic::inc::Communicator& c) {
        std::vector<uint8_t> in;
        if (in_place) in = copy_of(recvbuf, count * elem_bytes(r.t));
        return c.allreduce(in_place ? in.data() : sendbuf, recvbuf, count, r.t, r.op);
      },
      [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  using namespace epic::mpi;
  const Reduction r = map_reduction(datatype, op);
  std::string why = reduction_why(r, count);
  const int size = comm == MPI_COMM_NULL ? 0 : comm_size(comm);
  if (why.empty() && (root < 0 || root >= size)) why = "root " + std::to_string(root) + " invalid";
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return collective(
      Call::kReduce, comm, why,
      describe(count, datatype, in_place ? "MPI_IN_PLACE" : nullptr) + ", " + op_name(op) +
          ", root " + std::to_string(root),
      [&](epic::inc::Communicator& c) {
        const bool is_root = c.rank() == root;
        std::vector<uint8_t> in;
        if (in_place && is_root) in = copy_of(recvbuf, count * elem_bytes(r.t));
        return c.reduce(in_place ? in.data() : sendbuf, is_root ? recvbuf : nullptr, count, r.t,
                        r.op, static_cast<uint16_t>(root));
      },
      [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); });
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  using namespace epic::mpi;
  const Layout lay = layout_of(count, datatype);
  std::string why = lay.error;
  const int size = comm == MPI_COMM_NULL ? 0 : comm_size(comm);
  if (why.empty() && lay.bytes == 0) why = "no data (0 bytes)";
  if (why.empty() && (root < 0 || root >= size)) why = "root " + std::to_string(root) + " invalid";
  if (why.empty() && !lay.dense && lay.bytes > kMaxPackBytes) why = "packed size over 2 GiB";
  return collective(
      Call::kBcast, comm, why,
      describe(count, datatype, lay.dense ? nullptr : "packed") + ", root " + std::to_string(root),
      [&](epic::inc::Communicator& c) {
        if (lay.dense)
          return c.broadcast(buffer, lay.bytes, DType::kInt8, static_cast<uint16_t>(root));
        const bool is_root = c.rank() == root;
        std::vector<uint8_t> bytes = is_root ? pack(buffer, count, datatype, lay.bytes, comm)
                                             : std::vector<uint8_t>(lay.bytes);
        epic::inc::Status st =
            c.broadcast(bytes.data(), lay.bytes, DType::kInt8, static_cast<uint16_t>(root));
        if (st.ok() && !is_root) unpack(bytes, buffer, count, datatype, comm);
        return st;
      },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

int MPI_Barrier(MPI_Comm comm) {
  using namespace epic::mpi;
  return collective(
      Call::kBarrier, comm, "", "no data", [&](epic::inc::Communicator& c) { return c.barrier(); },
      [&] { return PMPI_Barrier(comm); });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  using namespace epic::mpi;
  const Reduction r = map_reduction(datatype, op);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return collective(
      Call::kReduceScatterBlock, comm, reduction_why(r, recvcount),
      describe(recvcount, datatype, in_place ? "MPI_IN_PLACE" : nullptr) + " per rank, " +
          op_name(op),
      [&](epic::inc::Communicator& c) {
        std::vector<uint8_t> in;
        if (in_place) in = copy_of(recvbuf, size_t{c.size()} * recvcount * elem_bytes(r.t));
        return c.reduce_scatter(in_place ? in.data() : sendbuf, recvbuf, recvcount, r.t, r.op);
      },
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  using namespace epic::mpi;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const Layout recv_one = layout_of(recvcount, recvtype);
  const Layout send = in_place ? recv_one : layout_of(sendcount, sendtype);
  const int size = comm == MPI_COMM_NULL ? 0 : comm_size(comm);
  std::string why = !send.error.empty() ? send.error : recv_one.error;
  if (why.empty() && send.bytes == 0) why = "no data (0 bytes)";
  if (why.empty() && send.bytes != recv_one.bytes) {
    why = "send (" + std::to_string(send.bytes) + " bytes) and receive (" +
          std::to_string(recv_one.bytes) + " bytes) sizes differ";
  }
  const bool recv_dense = recv_one.dense;
  const size_t total = send.bytes * static_cast<size_t>(size);
  if (why.empty() && (!recv_dense || !send.dense) &&
      (total > kMaxPackBytes || static_cast<int64_t>(recvcount) * size > INT32_MAX)) {
    why = "packed size over 2 GiB";
  }
  return collective(
      Call::kAllgather, comm, why,
      describe(in_place ? recvcount : sendcount, in_place ? recvtype : sendtype,
               in_place ? "MPI_IN_PLACE" : (send.dense && recv_dense ? nullptr : "packed")),
      [&](epic::inc::Communicator& c) {
        MPI_Aint lb = 0, extent = 0;
        PMPI_Type_get_extent(recvtype, &lb, &extent);
        std::vector<uint8_t> in;
        const void* src = sendbuf;
        if (in_place) {
          const auto* mine = static_cast<const uint8_t*>(recvbuf) +
                             static_cast<ptrdiff_t>(c.rank()) * recvcount * extent;
          in = recv_dense ? copy_of(mine, send.bytes)
                          : pack(mine, recvcount, recvtype, send.bytes, comm);
          src = in.data();
        } else if (!send.dense) {
          in = pack(sendbuf, sendcount, sendtype, send.bytes, comm);
          src = in.data();
        }
        if (recv_dense) return c.allgather(src, recvbuf, send.bytes, DType::kInt8);
        std::vector<uint8_t> out(total);
        epic::inc::Status st = c.allgather(src, out.data(), send.bytes, DType::kInt8);
        if (st.ok()) unpack(out, recvbuf, recvcount * c.size(), recvtype, comm);
        return st;
      },
      [&] {
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

}  // extern "C"
