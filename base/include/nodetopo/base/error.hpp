// Error values and Result<T>, the error channel used everywhere inside nodetopo (every layer, from
// base up to the agent and the Kubernetes client).
//
// Exceptions are only thrown and caught at the boundaries (probe runner, command handlers, main);
// every other function that can fail returns Result<T>. An Error always says what failed and, when
// a file or object is at fault, names it, so that the message a user finally sees is actionable.
//
// Beyond the category an Error keeps what a caller that retries needs: the errno it came from (0
// when none), whether trying again may help (ErrorClass), and a context chain, so a failure deep in
// a retry loop still says what it was doing: "publishing ResourceSlices <- PUT ...: 409 Conflict"
// (the outermost context first, as osquery's Error prints "a <- b").
//
// Why not std::expected: clang 14 (Debian 12) has no <expected>; Result reads the same way.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

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

/// Whether trying the same operation again may succeed. Callers that retry (the daemon's refresh,
/// the API client) branch on this, never on the message.
enum class ErrorClass {
  kPermanent,  ///< the same request fails the same way until something is changed
  kTransient,  ///< a passing condition (EAGAIN, EINTR, EBUSY, a timeout, HTTP 429/5xx): retry later
  kConflict,   ///< a concurrent writer changed the object (HTTP 409): re-read, then retry
};

/// An error: category, message, and the file or object at fault (may be empty).
struct Error {
  ErrorCode code = ErrorCode::kIo;
  std::string message;
  std::string path;
  /// The errno the failure came from; 0 when it did not come from a system call.
  int sys_errno = 0;
  ErrorClass error_class = ErrorClass::kPermanent;
  /// What the callers were doing, innermost first (with_context() appends).
  std::vector<std::string> context;

  /// "path: message" when a path is set, else the message alone; with a context chain, the
  /// contexts outermost first, each followed by " <- ": "refreshing <- reading x <- path: message".
  [[nodiscard]] std::string describe() const;

  /// True for kTransient and kConflict.
  [[nodiscard]] bool retryable() const { return error_class != ErrorClass::kPermanent; }

  /// Adds what the caller was doing; returns the error for `return e.with_context("...")`.
  Error& with_context(std::string what) & {
    context.push_back(std::move(what));
    return *this;
  }
  Error&& with_context(std::string what) && {
    context.push_back(std::move(what));
    return std::move(*this);
  }
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
  Error e;
  e.code = code;
  e.message = std::move(message);
  e.path = std::move(path);
  return e;
}

/// An Error for a failed system call: "<what>: <strerror(err)>", with the code and class that
/// `err` implies (ENOENT not found, EACCES/EPERM permission, ELOOP symlink loop, EAGAIN, EINTR,
/// EBUSY and ETIMEDOUT transient) and sys_errno = err.
Error errno_error(int err, std::string_view what, std::string path = {});

/// The class a system error implies (see errno_error()).
ErrorClass class_of_errno(int err);

}  // namespace nodetopo
