#include "gmb/args.hpp"

#include <cerrno>
#include <climits>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "gmb/error.hpp"

namespace gmb {

void ArgParser::value(std::vector<std::string> names, std::string metavar, std::string help, Setter set) {
  specs_.push_back({std::move(names), std::move(metavar), std::move(help), std::move(set)});
}

void ArgParser::flag(std::vector<std::string> names, std::string help, bool* target) {
  specs_.push_back({std::move(names), "", std::move(help), [target](const std::string&) { *target = true; }});
}

const ArgParser::Spec* ArgParser::lookup(const std::string& name) const {
  for (const auto& spec : specs_)
    for (const auto& n : spec.names)
      if (n == name) return &spec;
  return nullptr;
}

std::vector<std::string> ArgParser::parse(const std::vector<std::string>& args) const {
  std::vector<std::string> positionals;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& arg = args[k];
    // A lone "-" or a negative-looking number is positional; options start with a letter.
    if (arg.size() < 2 || arg[0] != '-' || (arg[1] != '-' && !std::isalpha(static_cast<unsigned char>(arg[1])))) {
      positionals.push_back(arg);
      continue;
    }
    std::string name = arg, inline_value;
    bool has_inline = false;
    if (const auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
      has_inline = true;
    }
    const Spec* spec = lookup(name);
    if (!spec) throw UsageError("unknown option '" + name + "' (see --help for the options this benchmark accepts)");
    if (spec->metavar.empty()) {
      if (has_inline) throw UsageError("option " + name + " takes no value");
      spec->set("");
      continue;
    }
    std::string value;
    if (has_inline) {
      value = inline_value;
    } else {
      if (k + 1 >= args.size()) throw UsageError("option " + name + " needs a value (" + spec->metavar + ")");
      value = args[++k];
    }
    try {
      spec->set(value);
    } catch (const UsageError& e) {
      throw UsageError(name + ": " + e.what());
    }
  }
  return positionals;
}

std::string ArgParser::help() const {
  std::string out;
  for (const auto& spec : specs_) {
    std::string left = "  ";
    for (std::size_t k = 0; k < spec.names.size(); ++k) left += (k ? ", " : "") + spec.names[k];
    if (!spec.metavar.empty()) left += " " + spec.metavar;
    if (left.size() < 30) left.resize(30, ' ');
    else left += "\n" + std::string(30, ' ');
    out += left + spec.help + "\n";
  }
  return out;
}

// A whole number from `lowest` to INT_MAX; the message names the accepted range, whatever was wrong.
static int parse_int_from(const std::string& text, const std::string& what, int lowest) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v > INT_MAX || v < lowest)
    throw UsageError("bad " + what + " '" + text + "' (accepted: a whole number from " + std::to_string(lowest) +
                     " to " + std::to_string(INT_MAX) + ")");
  return static_cast<int>(v);
}

int parse_positive_int(const std::string& text, const std::string& what) { return parse_int_from(text, what, 1); }

int parse_nonnegative_int(const std::string& text, const std::string& what) { return parse_int_from(text, what, 0); }

// A finite decimal number, the whole of `text` (no spaces, no "inf"); false otherwise.
static bool parse_finite(const std::string& text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && std::isfinite(value);
}

double parse_precision(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  double value = 0;
  const bool number = parse_finite(percent ? text.substr(0, text.size() - 1) : text, value);
  if (percent) value /= 100;
  // Above 0.5 the interval would be allowed to reach from half the median to one and a half times it:
  // no precision at all, and more likely a percentage written without its "%".
  if (!number || !(value > 0) || value > 0.5)
    throw UsageError("bad precision '" + text + "' (accepted: a fraction above 0 and at most 0.5, e.g. 0.03 for "
                     "+-3%, or a percentage, e.g. 3%)");
  return value;
}

double parse_positive_seconds(const std::string& text, const std::string& what) {
  double value = 0;
  if (!parse_finite(text, value) || !(value > 0))
    throw UsageError("bad " + what + " '" + text + "' (accepted: seconds above 0, e.g. 1 or 0.25)");
  return value;
}

std::string parse_choice(const std::string& text, const std::vector<std::string>& choices, const std::string& what) {
  for (const auto& c : choices)
    if (c == text) return text;
  std::string accepted;
  for (const auto& c : choices) accepted += (accepted.empty() ? "" : ", ") + c;
  throw UsageError("unknown " + what + " '" + text + "' (accepted: " + accepted + ")");
}

}  // namespace gmb
