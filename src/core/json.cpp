// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/json.hpp"

#include <cmath>
#include <cstdio>

namespace gmb {

Json Json::object_of(const std::map<std::string, std::string>& items) {
  Json o = object();
  for (const auto& [k, v] : items) o.set(k, v);
  return o;
}

Json Json::verbatim(std::string dumped) { return Json(Dumped{std::move(dumped)}); }

Json& Json::set(const std::string& key, Json value) {
  if (!is_object()) value_ = Object{};
  auto& members = std::get<Object>(value_);
  for (auto& [k, v] : members) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  members.emplace_back(key, std::move(value));
  return *this;
}

const Json* Json::find(const std::string& key) const {
  const auto* members = as_object();
  if (!members) return nullptr;
  for (const auto& [k, v] : *members)
    if (k == key) return &v;
  return nullptr;
}

Json& Json::push(Json value) {
  if (!std::holds_alternative<Array>(value_)) value_ = Array{};
  std::get<Array>(value_).push_back(std::move(value));
  return *this;
}

bool Json::is_number() const {
  return std::holds_alternative<std::int64_t>(value_) || std::holds_alternative<double>(value_);
}

double Json::as_number() const {
  if (auto* i = std::get_if<std::int64_t>(&value_)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&value_)) return *d;
  return 0.0;
}

const std::string* Json::as_string() const { return std::get_if<std::string>(&value_); }
const Json::Object* Json::as_object() const { return std::get_if<Object>(&value_); }
const Json::Array* Json::as_array() const { return std::get_if<Array>(&value_); }

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

// Length of the well-formed UTF-8 sequence starting at s[at] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one.
static std::size_t utf8_sequence_length(const std::string& s, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the byte after the lead
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // below: an overlong form
    if (lead == 0xED) high = 0x9F;  // above: a surrogate
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // below: an overlong form
    if (lead == 0xF4) high = 0x8F;  // above: beyond U+10FFFF
  } else {
    return 0;
  }
  if (at + length > s.size() || byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (byte(at + k) < 0x80 || byte(at + k) > 0xBF) return 0;
  return length;
}

// Records are UTF-8 JSON whatever the strings hold (an environment variable may carry any bytes): each
// byte that does not start a well-formed UTF-8 sequence is written as U+FFFD, the replacement character.
static void dump_string(const std::string& s, std::string& out) {
  out += '"';
  for (std::size_t at = 0; at < s.size(); ++at) {
    const auto c = static_cast<unsigned char>(s[at]);
    if (c >= 0x80) {
      const std::size_t length = utf8_sequence_length(s, at);
      if (length == 0) {
        out += "\xEF\xBF\xBD";
      } else {
        out.append(s, at, length);
        at += length - 1;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void Json::dump_to(std::string& out) const {
  if (std::holds_alternative<std::nullptr_t>(value_)) {
    out += "null";
  } else if (auto* b = std::get_if<bool>(&value_)) {
    out += *b ? "true" : "false";
  } else if (auto* i = std::get_if<std::int64_t>(&value_)) {
    out += std::to_string(*i);
  } else if (auto* d = std::get_if<double>(&value_)) {
    if (!std::isfinite(*d)) {
      out += "null";  // JSON has no NaN/Inf
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", *d);
      out += buf;
    }
  } else if (auto* s = std::get_if<std::string>(&value_)) {
    dump_string(*s, out);
  } else if (auto* dumped = std::get_if<Dumped>(&value_)) {
    out += dumped->text;
  } else if (auto* a = std::get_if<Array>(&value_)) {
    out += '[';
    for (std::size_t k = 0; k < a->size(); ++k) {
      if (k) out += ',';
      (*a)[k].dump_to(out);
    }
    out += ']';
  } else if (auto* o = std::get_if<Object>(&value_)) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : *o) {
      if (!first) out += ',';
      first = false;
      dump_string(k, out);
      out += ':';
      v.dump_to(out);
    }
    out += '}';
  }
}

}  // namespace gmb
