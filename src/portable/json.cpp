// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/json.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

namespace {

// A recursive-descent reader of one JSON document; `error` names the first problem and its byte offset.
class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : text_(text) {}

  std::optional<Json> document(std::string* error) {
    std::optional<Json> value = this->value(0);
    skip_space();
    if (value && at_ < text_.size()) fail("text after the JSON value");
    if (!error_.empty()) {
      *error = error_ + " at byte " + std::to_string(at_);
      return std::nullopt;
    }
    return value;
  }

 private:
  // Deeper than any tool's output nests; a bound keeps a hostile text from exhausting the stack.
  static constexpr int kMaxDepth = 64;

  std::optional<Json> fail(const std::string& what) {
    if (error_.empty()) error_ = what;
    return std::nullopt;
  }
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (text_.compare(at_, w.size(), w) != 0) return false;
    at_ += w.size();
    return true;
  }

  std::optional<Json> value(int depth) {
    if (depth > kMaxDepth) return fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    skip_space();
    if (at_ >= text_.size()) return fail("the text ends where a value was expected");
    const char c = text_[at_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      std::optional<std::string> s = string();
      if (!s) return std::nullopt;
      return Json(*s);
    }
    if (literal("true")) return Json(true);
    if (literal("false")) return Json(false);
    if (literal("null")) return Json();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number();
    return fail(std::string("unexpected character '") + c + "'");
  }

  std::optional<Json> object(int depth) {
    ++at_;  // '{'
    Json out = Json::object();
    skip_space();
    if (at_ < text_.size() && text_[at_] == '}') {
      ++at_;
      return out;
    }
    for (;;) {
      skip_space();
      if (at_ >= text_.size() || text_[at_] != '"') return fail("an object's member name is not a string");
      std::optional<std::string> key = string();
      if (!key) return std::nullopt;
      skip_space();
      if (at_ >= text_.size() || text_[at_] != ':') return fail("no ':' after an object's member name");
      ++at_;
      std::optional<Json> member = value(depth + 1);
      if (!member) return std::nullopt;
      out.set(*key, std::move(*member));
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == '}') {
        ++at_;
        return out;
      }
      return fail("an object's members are not separated by ',' or closed by '}'");
    }
  }

  std::optional<Json> array(int depth) {
    ++at_;  // '['
    Json out = Json::array();
    skip_space();
    if (at_ < text_.size() && text_[at_] == ']') {
      ++at_;
      return out;
    }
    for (;;) {
      std::optional<Json> item = value(depth + 1);
      if (!item) return std::nullopt;
      out.push(std::move(*item));
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == ']') {
        ++at_;
        return out;
      }
      return fail("an array's items are not separated by ',' or closed by ']'");
    }
  }

  std::optional<Json> number() {
    const std::size_t start = at_;
    if (text_[at_] == '-') ++at_;
    const auto digits = [&] {
      const std::size_t from = at_;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
      return at_ > from;
    };
    if (!digits()) return fail("a number without digits");
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      if (!digits()) return fail("a number without digits after '.'");
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (!digits()) return fail("a number without digits in its exponent");
    }
    // strtod gives infinity for a number beyond a double's range: kept, for the reader to judge.
    return Json(std::strtod(text_.substr(start, at_ - start).c_str(), nullptr));
  }

  // A string, its escapes decoded (\uXXXX as UTF-8, a surrogate pair as one character).
  std::optional<std::string> string() {
    ++at_;  // '"'
    std::string out;
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return fail_text("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) break;
      const char e = text_[at_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned long code = 0;
          if (!hex4(&code)) return fail_text("a \\u escape without four hexadecimal digits");
          if (code >= 0xD800 && code <= 0xDBFF && text_.compare(at_, 2, "\\u") == 0) {
            at_ += 2;
            unsigned long low = 0;
            if (!hex4(&low) || low < 0xDC00 || low > 0xDFFF) return fail_text("a \\u surrogate pair that does not pair");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(code, out);
          break;
        }
        default: return fail_text(std::string("an unknown escape '\\") + e + "'");
      }
    }
    return fail_text("a string that is not closed");
  }
  std::optional<std::string> fail_text(const std::string& what) {
    fail(what);
    return std::nullopt;
  }
  bool hex4(unsigned long* code) {
    if (at_ + 4 > text_.size()) return false;
    for (int k = 0; k < 4; ++k)
      if (!std::isxdigit(static_cast<unsigned char>(text_[at_ + static_cast<std::size_t>(k)]))) return false;
    *code = std::strtoul(text_.substr(at_, 4).c_str(), nullptr, 16);
    at_ += 4;
    return true;
  }
  static void append_utf8(unsigned long code, std::string& out) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  const std::string& text_;
  std::size_t at_ = 0;
  std::string error_;
};

}  // namespace

std::optional<Json> Json::parse(const std::string& text, std::string* error) { return JsonReader(text).document(error); }

}  // namespace gmb
