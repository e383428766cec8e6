// Error values and Result<T>, the error channel used everywhere inside nodetopo.
//
// Exceptions are only thrown and caught at the boundaries (probe runner, command handlers, main);
// every other function that can fail returns Result<T>. An Error always says what failed and, when
// a file or object is at fault, names it, so that the message a user finally sees is actionable.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace nodetopo {

/// Broad failure categories; callers branch on these, users read the message.
enum class ErrorCode {
  kNotFound,     ///< a file, directory or object does not exist
  kPermission,   ///< the OS refused access
  kMalformed,    ///< content exists but cannot be parsed
  kEscapesRoot,  ///< a path or symlink leads outside the host root
  kSymlinkLoop,  ///< symlinks nest too deep or loop
  kIo,           ///< any other operating-system error
  kUnavailable,  ///< an optional facility (library, hardware) is absent
  kInvalid,      ///< a request or configuration is invalid
};

/// Human-readable name of an error code ("not found", "malformed", ...).
std::string_view to_string(ErrorCode code);

/// An error: category, message, and the file or object at fault (may be empty).
struct Error {
  ErrorCode code = ErrorCode::kIo;
  std::string message;
  std::string path;

  /// "path: message" when a path is set, else the message alone.
  [[nodiscard]] std::string describe() const;
};

/// Either a value of T or an Error. Cheap to move; accessing the wrong side is a logic error
/// caught by assertions in debug builds.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : data_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return data_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(data_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(data_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(data_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(data_);
  }

  template <class U>
  T value_or(U&& fallback) const& {
    return ok() ? std::get<0>(data_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  std::variant<T, Error> data_;
};

/// Result of an operation that yields nothing but may fail.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

/// Shorthand to build an Error in a return statement.
inline Error make_error(ErrorCode code, std::string message, std::string path = {}) {
  return Error{code, std::move(message), std::move(path)};
}

}  // namespace nodetopo
