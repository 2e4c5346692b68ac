// The one C++ exception type of the core. Every N-API entry turns it (and c10::Error,
// and any std::exception) into a JS SwerlError with the same code.
#pragma once
#include <stdexcept>
#include <string>

namespace swerl {

class Error : public std::runtime_error {
 public:
  Error(std::string code, const std::string& message)
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// Input that does not fit the contract (JS validates first; this is the C++ callers' guard).
[[noreturn]] inline void throw_invalid(const std::string& message) {
  throw Error("ERR_SWERL_INVALID_ARG", message);
}

}  // namespace swerl
