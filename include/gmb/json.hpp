// SPDX-License-Identifier: BSD-3-Clause
// A small JSON value used to build records. Objects keep insertion order so that records read
// in the order they were written. The engine parses only what other programs print as JSON (iperf3 -J).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gmb {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() : value_(nullptr) {}
  Json(std::nullptr_t) : value_(nullptr) {}
  Json(bool b) : value_(b) {}
  Json(int i) : value_(static_cast<std::int64_t>(i)) {}
  Json(long i) : value_(static_cast<std::int64_t>(i)) {}
  Json(long long i) : value_(static_cast<std::int64_t>(i)) {}
  Json(unsigned i) : value_(static_cast<std::int64_t>(i)) {}
  Json(unsigned long i) : value_(static_cast<std::int64_t>(i)) {}
  Json(unsigned long long i) : value_(static_cast<std::int64_t>(i)) {}
  Json(double d) : value_(d) {}
  Json(const char* s) : value_(std::string(s)) {}
  Json(std::string s) : value_(std::move(s)) {}
  Json(Array a) : value_(std::move(a)) {}
  Json(Object o) : value_(std::move(o)) {}

  static Json object() { return Json(Object{}); }
  static Json array() { return Json(Array{}); }
  template <typename T>
  static Json array_of(const std::vector<T>& items) {
    Array a;
    for (const auto& item : items) a.emplace_back(item);
    return Json(std::move(a));
  }
  static Json object_of(const std::map<std::string, std::string>& items);
  // A value another rank built and sent as its dump(): written back as it is, never parsed.
  static Json verbatim(std::string dumped);
  // The JSON document `text` (RFC 8259; numbers as doubles, a number too large for a double as infinity), or
  // nullopt with `error` saying what was wrong and at which byte.
  static std::optional<Json> parse(const std::string& text, std::string* error);

  // Object access: sets (or replaces) a member and returns *this for chaining.
  Json& set(const std::string& key, Json value);
  // Returns the member, or nullptr when absent or not an object.
  const Json* find(const std::string& key) const;
  // Array access.
  Json& push(Json value);

  bool is_null() const { return std::holds_alternative<std::nullptr_t>(value_); }
  bool is_object() const { return std::holds_alternative<Object>(value_); }
  bool is_number() const;
  double as_number() const;  // 0 when not a number
  const std::string* as_string() const;
  const Object* as_object() const;
  const Array* as_array() const;

  std::string dump() const;  // compact, one line

 private:
  struct Dumped {
    std::string text;
  };
  explicit Json(Dumped d) : value_(std::move(d)) {}
  void dump_to(std::string& out) const;
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Array, Object, Dumped> value_;
};

}  // namespace gmb
