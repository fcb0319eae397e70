// A declarative command-line parser: each benchmark family declares its own options, so there is
// no global options struct. Accepts "--name value", "--name=value" and short aliases ("-m 1:4K").
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gmb {

class ArgParser {
 public:
  using Setter = std::function<void(const std::string& value)>;

  // An option that takes a value; `names` like {"--sizes", "-m"}. The setter throws UsageError
  // for a bad value; the parser prefixes the message with the option name.
  void value(std::vector<std::string> names, std::string metavar, std::string help, Setter set);
  // An option without a value.
  void flag(std::vector<std::string> names, std::string help, bool* target);

  // Parses args (no program or subcommand name). Returns the positional arguments in order.
  // Throws UsageError for unknown options or missing values.
  std::vector<std::string> parse(const std::vector<std::string>& args) const;

  // Option help, one line per option.
  std::string help() const;

 private:
  struct Spec {
    std::vector<std::string> names;
    std::string metavar;  // empty for flags
    std::string help;
    Setter set;
  };
  const Spec* lookup(const std::string& name) const;
  std::vector<Spec> specs_;
};

// Value parsers shared by the families; they throw UsageError naming what is accepted.
int parse_positive_int(const std::string& text, const std::string& what);
int parse_nonnegative_int(const std::string& text, const std::string& what);
// --precision: a fraction above 0 and at most 0.5 ("0.03"), or a percentage ("3%": 0.03).
double parse_precision(const std::string& text);
// A finite number of seconds above 0 ("1", "0.25").
double parse_positive_seconds(const std::string& text, const std::string& what);
// One of `choices`, exactly.
std::string parse_choice(const std::string& text, const std::vector<std::string>& choices,
                         const std::string& what);

}  // namespace gmb
