// The mock NVML library's memory: byte strings, a growing text buffer, an arena and a growing
// array, all on malloc/realloc/free.
//
// The library links no C++ runtime (docs/mock-nvml.md, "Linking"), so none of std::string,
// std::vector or operator new can be used here: each needs libstdc++.so, whose loading alone
// would cost every `topo dump` of a mock host more than the whole fixture parse. Every type below
// is trivially copyable (no destructor): the owner frees explicitly, and nothing can throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace nodetopo::mock_nvml {

/// A run of bytes (not owned). Those the fixture parser keeps are NUL-terminated, for C callers.
struct Str {
  const char* data = nullptr;
  std::size_t size = 0;

  friend bool operator==(Str a, Str b) {
    return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
  }
};

/// A C string literal as a Str.
inline Str str(const char* text) {
  return {text, std::strlen(text)};
}

/// A growing, NUL-terminated text (error messages, the fixture file). `failed` is set, and
/// appends ignored, once an allocation fails, so that a caller checks once at the end.
struct Text {
  char* data = nullptr;
  std::size_t size = 0;
  std::size_t capacity = 0;
  bool failed = false;

  /// Room for `extra` more bytes and the terminator.
  bool reserve(std::size_t extra);
  void append(Str s);
  void append(const char* s) { append(str(s)); }
  void append(char c) { append(Str{&c, 1}); }
  void append_unsigned(std::uint64_t value);
  void append_signed(std::int64_t value);
  void clear() {
    size = 0;
    if (data != nullptr) data[0] = '\0';
  }
  /// The text, "" when empty.
  const char* c_str() const { return data != nullptr ? data : ""; }
  Str view() const { return {c_str(), size}; }
  void free() {
    std::free(data);
    *this = Text{};
  }
};

/// Bump allocation in malloc'd chunks, all freed at once: a fixture's strings and arrays.
struct Arena {
  struct Chunk;
  Chunk* chunks = nullptr;
  /// `size` bytes aligned for any fixture type, or nullptr when malloc fails.
  void* allocate(std::size_t size);
  /// A NUL-terminated copy of `s` ({nullptr, 0} when malloc fails).
  Str copy(Str s);
  void free();
};

/// A growing array of trivially copyable T on realloc (the parser's lists while it reads them).
template <class T>
struct Vec {
  static_assert(std::is_trivially_copyable_v<T>);
  T* data = nullptr;
  std::uint32_t size = 0;
  std::uint32_t capacity = 0;

  /// Appends `value`; false when realloc fails or the array would pass 2^31 elements.
  bool push(const T& value) {
    if (size == capacity) {
      const std::uint32_t grown = capacity == 0 ? 16 : capacity * 2;
      if (grown > (std::uint32_t{1} << 31)) return false;
      void* p = std::realloc(data, sizeof(T) * grown);
      if (p == nullptr) return false;
      data = static_cast<T*>(p);
      capacity = grown;
    }
    data[size++] = value;
    return true;
  }
  void free() {
    std::free(data);
    *this = Vec{};
  }
};

/// A fixed array in an arena.
template <class T>
struct Array {
  T* data = nullptr;
  std::uint32_t size = 0;

  const T* begin() const { return data; }
  const T* end() const { return data + size; }
};

/// The elements of `v` copied into `arena` (an empty array when v is; size 0 and `ok` false when
/// malloc fails).
template <class T>
Array<T> to_array(Arena& arena, const Vec<T>& v, bool& ok) {
  if (v.size == 0) return {};
  void* p = arena.allocate(sizeof(T) * v.size);
  if (p == nullptr) {
    ok = false;
    return {};
  }
  std::memcpy(p, v.data, sizeof(T) * v.size);
  return {static_cast<T*>(p), v.size};
}

}  // namespace nodetopo::mock_nvml
