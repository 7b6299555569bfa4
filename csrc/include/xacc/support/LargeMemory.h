// Memory for large, randomly accessed structures (IR node arenas, hash tables
// sized to a graph). Allocations of 2 MiB and more are their own 2 MiB-aligned
// mappings (returned to the system when freed); those of 32 MiB and more also
// ask for transparent huge pages. Smaller ones come from the ordinary heap. Either way the memory is zero-filled.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace xacc::support {

/// Size from which allocateLarge maps memory (one huge page).
inline constexpr size_t kLargeAllocationThreshold = size_t(2) << 20;

/// Zero-filled memory of at least `bytes` bytes (16-byte aligned); sets
/// `reserved` to the size to pass back to freeLarge. Throws std::bad_alloc.
void* allocateLarge(size_t bytes, size_t& reserved);
void freeLarge(void* p, size_t reserved);

/// A fixed-size, zero-initialised array of trivial T in large memory.
template <class T>
class LargeArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

public:
  LargeArray() = default;
  explicit LargeArray(size_t n) : size_(n) {
    if (n) data_ = static_cast<T*>(allocateLarge(n * sizeof(T), reserved_));
  }
  ~LargeArray() {
    if (data_) freeLarge(data_, reserved_);
  }
  LargeArray(LargeArray&& o) noexcept { swap(o); }
  LargeArray& operator=(LargeArray&& o) noexcept {
    LargeArray(std::move(o)).swap(*this);
    return *this;
  }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* data() { return data_; }
  size_t size() const { return size_; }

private:
  void swap(LargeArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(reserved_, o.reserved_);
  }
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t reserved_ = 0;
};

}  // namespace xacc::support
