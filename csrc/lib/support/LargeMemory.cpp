// Large zero-filled allocations; see LargeMemory.h.
#include "xacc/support/LargeMemory.h"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#define XACC_LARGE_MMAP 1
#else
#define XACC_LARGE_MMAP 0
#endif

namespace xacc::support {

namespace {
constexpr size_t kHuge = kLargeAllocationThreshold;
constexpr size_t kHugePageAdviceThreshold = size_t(32) << 20;
size_t roundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }
}  // namespace

void* allocateLarge(size_t bytes, size_t& reserved) {
  if (bytes == 0) bytes = 1;
#if XACC_LARGE_MMAP
  if (bytes >= kHuge) {
    size_t size = roundUp(bytes, kHuge);
    // Over-map by one huge page and trim, so the block is 2 MiB aligned.
    size_t span = size + kHuge;
    void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw != MAP_FAILED) {
      uintptr_t start = reinterpret_cast<uintptr_t>(raw);
      uintptr_t aligned = (start + kHuge - 1) & ~(uintptr_t(kHuge) - 1);
      if (aligned > start) munmap(raw, aligned - start);
      size_t tail = (start + span) - (aligned + size);
      if (tail) munmap(reinterpret_cast<void*>(aligned + size), tail);
      void* p = reinterpret_cast<void*>(aligned);
      // Transparent huge pages only for big blocks (the arenas and tables of
      // graphs with hundreds of thousands of nodes, where TLB misses dominate
      // every walk): a huge page counts fully in resident memory on first touch,
      // which small graphs must not pay for.
      if (size >= kHugePageAdviceThreshold) madvise(p, size, MADV_HUGEPAGE);
      reserved = size;
      return p;
    }
  }
#endif
  void* p = std::calloc(1, bytes);
  if (!p) throw std::bad_alloc();
  // Heap blocks are marked by a reserved size below the mapping threshold.
  reserved = bytes < kHuge ? bytes : kHuge - 1;
  return p;
}

void freeLarge(void* p, size_t reserved) {
  if (!p) return;
#if XACC_LARGE_MMAP
  if (reserved >= kHuge) {
    munmap(p, reserved);
    return;
  }
#endif
  std::free(p);
}

}  // namespace xacc::support
