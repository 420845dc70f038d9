#include "datapath/dpdk/snapshot.h"

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include <stdexcept>

namespace epic::dpdk {

SnapshotPublisher::SnapshotPublisher(unsigned workers) {
  const size_t sz = rte_rcu_qsbr_get_memsize(workers);
  qsbr_ = static_cast<rte_rcu_qsbr*>(rte_zmalloc("incd_qsbr", sz, RTE_CACHE_LINE_SIZE));
  if (qsbr_ == nullptr || rte_rcu_qsbr_init(qsbr_, workers) != 0)
    throw std::runtime_error("cannot create the RCU (QSBR) variable");
  for (unsigned w = 0; w < workers; ++w) rte_rcu_qsbr_thread_register(qsbr_, w);
}

SnapshotPublisher::~SnapshotPublisher() {
  delete current_.load();
  rte_free(qsbr_);
}

void SnapshotPublisher::publish(std::unique_ptr<Snapshot> s) {
  s->version = next_version_++;
  const Snapshot* old = current_.exchange(s.release(), std::memory_order_acq_rel);
  // Every online worker passes a quiescent state after seeing the new pointer.
  rte_rcu_qsbr_synchronize(qsbr_, RTE_QSBR_THRID_INVALID);
  delete old;
}

void SnapshotPublisher::online(unsigned worker) { rte_rcu_qsbr_thread_online(qsbr_, worker); }
void SnapshotPublisher::offline(unsigned worker) { rte_rcu_qsbr_thread_offline(qsbr_, worker); }
void SnapshotPublisher::quiescent(unsigned worker) { rte_rcu_qsbr_quiescent(qsbr_, worker); }

}  // namespace epic::dpdk
