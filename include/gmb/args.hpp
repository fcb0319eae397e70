// SPDX-License-Identifier: BSD-3-Clause
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
  // An option whose value is optional: the next argument is its value when `takes(next)` says so,
  // otherwise `set` gets "" (OMB's bare -f next to gmb's -f table|json).
  void optional_value(std::vector<std::string> names, std::string metavar, std::string help,
                      std::function<bool(const std::string& next)> takes, Setter set);
  // An option whose value is one of `choices`, checked when parsed ("unknown WHAT 'x' (accepted: ...)");
  // help() and the engine's description list the choices.
  void choice(std::vector<std::string> names, std::vector<std::string> choices, std::string what, std::string help,
              Setter set);
  // An option whose value is a comma-separated list of `choices` ("gmb-tcp,iperf3"), each checked when parsed
  // ("unknown WHAT 'x' (accepted: ...)"); `set` gets the items in order, each once. help() and the engine's
  // description list the choices (the description with "list": true).
  void choice_list(std::vector<std::string> names, std::vector<std::string> choices, std::string what, std::string help,
                   std::function<void(const std::vector<std::string>&)> set);
  // A name that is not an option here, with why (OMB letters gmb does not have): parse() throws
  // UsageError with `reason` instead of "unknown option". Not listed in help(); a declared option wins.
  void refuse(std::vector<std::string> names, std::string reason);
  // Whether `name` is declared as an option (not a refusal).
  bool declares(const std::string& name) const;
  // Whether the last parse() met `name` (any of its option's names counts).
  bool given(const std::string& name) const;
  // Sets option `name` to `value` as if the command line gave it (UsageError as parse() words it).
  void apply(const std::string& name, const std::string& value) const;

  // Parses args (no program or subcommand name). Returns the positional arguments in order.
  // Throws UsageError for unknown options or missing values.
  std::vector<std::string> parse(const std::vector<std::string>& args) const;

  // Option help, one line per option.
  std::string help() const;

  // The declared options as the engine's description lists them (docs/records.md): their names, whether
  // they take a value, and the accepted values where the option declares them.
  struct OptionInfo {
    std::vector<std::string> names;
    std::string value;                 // "required", "optional" or "none"
    std::string metavar;               // the value's form ("" without a value)
    std::vector<std::string> choices;  // the accepted values of a choice(); empty otherwise
    bool list = false;                 // a choice_list(): the value is a comma-separated list of the choices
  };
  std::vector<OptionInfo> options() const;

 private:
  struct Spec {
    std::vector<std::string> names;
    std::string metavar;  // empty for flags
    std::string help;
    Setter set;
    std::function<bool(const std::string&)> takes;  // optional values only
    std::vector<std::string> choices;               // choice() and choice_list() only
    bool list = false;                              // choice_list()
  };
  struct Refusal {
    std::vector<std::string> names;
    std::string reason;
  };
  const Spec* lookup(const std::string& name) const;
  void set_value(const Spec& spec, const std::string& name, const std::string& value) const;
  std::vector<Spec> specs_;
  std::vector<Refusal> refusals_;
  mutable std::vector<const Spec*> given_;
};

// Value parsers shared by the families; they throw UsageError naming what is accepted.
int parse_positive_int(const std::string& text, const std::string& what);
int parse_nonnegative_int(const std::string& text, const std::string& what);
// --precision: a fraction above 0 and at most 0.5 ("0.03"), or a percentage ("3%": 0.03).
double parse_precision(const std::string& text);
// A finite number of seconds above 0 ("1", "0.25").
double parse_positive_seconds(const std::string& text, const std::string& what);
// "; did you mean 'x'?" naming the entry of `known` closest to a mistyped `name` (a few letters apart), or "":
// what every "unknown ..." message appends.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& known);
// One of `choices`, exactly.
std::string parse_choice(const std::string& text, const std::vector<std::string>& choices,
                         const std::string& what);
// A comma-separated list of `choices`, in order, each once.
std::vector<std::string> parse_choice_list(const std::string& text, const std::vector<std::string>& choices,
                                           const std::string& what);

// ---- OSU Micro-Benchmarks (OMB) spellings (docs/omb.md) -------------------------------------------------
// OMB's -d/--accelerator TYPE: "cuda" or "managed" (any case, as OMB compares); openacc, rocm and sycl are
// refused (gmb-bench measures CUDA devices only), anything else too, each naming what is accepted.
std::string parse_omb_accelerator(const std::string& text);
// What -d means to a point-to-point benchmark (OMB `program`) given its buffer letters, where a user could
// expect otherwise: the line rank 0 says on stderr, or "". OMB places pt2pt buffers by the letters alone
// (H host, D device, MH/MD managed): -d without letters leaves both sides on the host, and D stays device
// memory under -d managed. `sides_given`: gmb's --send/--recv chose the memory instead of letters.
std::string omb_pt2pt_accelerator_warning(const std::string& accelerator, const std::string& program,
                                          const std::vector<std::string>& letters, bool sides_given);
// Refusals, each saying what OMB means by the letter and what gmb has instead, for OMB's short options that
// `parser` does not declare (called after the benchmark declared its own options).
void add_omb_refusals(ArgParser& parser);

// nccl-tests' spelling of a size sweep (-b MIN -e MAX [-f FACTOR]: -b followed by a size, and -e given), which OMB's
// letters would otherwise read as something else (-b: OMB's --buffer-num): UsageError saying what gmb's spelling is
// ("this is nccl-tests' spelling: use --sizes 8:1M"). Nothing else is touched.
void refuse_nccl_tests_sizes(const std::vector<std::string>& args);

}  // namespace gmb
