// The public load/combine/store: one indirect call through the active table.
#include "datapath/arith/accumulate.h"

#include "datapath/arith/kernels.h"

namespace epic::arith {

void load(DType t, uint8_t* acc, const uint8_t* wire, size_t n) {
  load(active_kernels(), t, acc, wire, n);
}

void combine(DType t, ReduceOp op, uint8_t* acc, const uint8_t* wire, size_t n) {
  combine(active_kernels(), t, op, acc, wire, n);
}

void store(DType t, uint8_t* wire, const uint8_t* acc, size_t n) {
  store(active_kernels(), t, wire, acc, n);
}

}  // namespace epic::arith
