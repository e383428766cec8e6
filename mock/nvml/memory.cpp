#include "memory.hpp"

namespace nodetopo::mock_nvml {

bool Text::reserve(std::size_t extra) {
  if (failed) return false;
  if (size + extra + 1 <= capacity) return true;
  std::size_t grown = capacity < 128 ? 128 : capacity;
  while (grown < size + extra + 1)
    grown *= 2;
  void* p = std::realloc(data, grown);
  if (p == nullptr) {
    failed = true;
    return false;
  }
  data = static_cast<char*>(p);
  capacity = grown;
  return true;
}

void Text::append(Str s) {
  if (!reserve(s.size)) return;
  if (s.size != 0) std::memcpy(data + size, s.data, s.size);
  size += s.size;
  data[size] = '\0';
}

void Text::append_unsigned(std::uint64_t value) {
  char digits[20];
  std::size_t n = 0;
  do {
    digits[sizeof digits - ++n] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  append(Str{digits + sizeof digits - n, n});
}

void Text::append_signed(std::int64_t value) {
  if (value < 0) {
    append('-');
    // -(value + 1) + 1: no overflow at INT64_MIN.
    append_unsigned(static_cast<std::uint64_t>(-(value + 1)) + 1);
  } else {
    append_unsigned(static_cast<std::uint64_t>(value));
  }
}

struct Arena::Chunk {
  Chunk* next;
  std::size_t used;
  std::size_t capacity;
};

namespace {
constexpr std::size_t kAlign = alignof(std::max_align_t);
constexpr std::size_t kHeader = (sizeof(Arena::Chunk) + kAlign - 1) / kAlign * kAlign;
// One chunk holds a DGX fixture's strings and arrays; the 64-GPU synthetic one takes two.
constexpr std::size_t kChunkBytes = std::size_t{32} << 10;
}  // namespace

void* Arena::allocate(std::size_t size) {
  size = (size + kAlign - 1) / kAlign * kAlign;
  if (chunks == nullptr || chunks->capacity - chunks->used < size) {
    const std::size_t capacity = size > kChunkBytes ? size : kChunkBytes;
    void* p = std::malloc(kHeader + capacity);
    if (p == nullptr) return nullptr;
    auto* chunk = static_cast<Chunk*>(p);
    *chunk = Chunk{chunks, 0, capacity};
    chunks = chunk;
  }
  char* out = reinterpret_cast<char*>(chunks) + kHeader + chunks->used;
  chunks->used += size;
  return out;
}

Str Arena::copy(Str s) {
  auto* p = static_cast<char*>(allocate(s.size + 1));
  if (p == nullptr) return {};
  if (s.size != 0) std::memcpy(p, s.data, s.size);
  p[s.size] = '\0';
  return {p, s.size};
}

void Arena::free() {
  while (chunks != nullptr) {
    Chunk* next = chunks->next;
    std::free(chunks);
    chunks = next;
  }
}

}  // namespace nodetopo::mock_nvml
