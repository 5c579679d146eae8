#pragma once

// Shared pieces of tilescope-cli's subcommands. Each subcommand lives in its own file and
// registers itself on the CLI11 app; main.cpp wires them together and maps errors to exit codes.

#include "base/textformat.h"
#include "expr/expr.h"
#include "jobs/requestcheck.h"
#include "store/resultstore.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {
class ConfigSpace;
class TuningProblem;
} // namespace tilescope

namespace tilescope::cli {

/// Exit codes: 0 ok, 1 internal error, 2 bad input (the message on stderr says what and where).
enum ExitCode : int { kOk = 0, kInternalError = 1, kBadInput = 2, kStale = 3 /* check: stale entries */ };

/// A subcommand's action returns an exit code; InputError thrown from it becomes kBadInput.
using Action = std::function<int()>;

/// Registers a subcommand; `action` is run by main() when the subcommand is selected.
void setAction(CLI::App* subcommand, Action action);

/// Marks an option (or positional) whose values are files the command reads. Returns `option`.
CLI::Option* readsFile(CLI::Option* option);
/// Marks an option whose value is a file the command writes (`-` for standard output, where the
/// command takes it); `location` names the option in messages, as the command's own writes do
/// ("-o"). Returns `option`.
CLI::Option* writesFile(CLI::Option* option, std::string location);
/// Run by main() before the command: throws InputError when an output the command was given, or
/// the file standard output goes to, is the same file as one of the inputs it was given (by device
/// and inode, through any link): writing it would destroy what the command reads.
void refuseOutputsThatAreInputs();

/// `tilescope-cli space ...`
void registerSpace(CLI::App& app);
/// `tilescope-cli analyze ...`
void registerAnalyze(CLI::App& app);
/// `tilescope-cli tune ...`
void registerTune(CLI::App& app);
/// `tilescope-cli show ...`
void registerShow(CLI::App& app);
/// `check`: whether a JSON cache of tuned configs still holds on a machine and for its problems.
void registerCheck(CLI::App& app);
/// `tilescope-cli export ...`
void registerExport(CLI::App& app);
/// `tilescope-cli import ...`
void registerImport(CLI::App& app);
/// `tilescope-cli compare A B`: one problem's results on two GPUs side by side.
void registerCompare(CLI::App& app);

/// A progress line on stderr ("compiled 120/400  35.2/s  ETA 8s"), redrawn at most 10 times per
/// second, only when stderr is a terminal (or always, when forced), finished with a newline.
class Progress {
public:
    Progress(std::string verb, std::uint64_t total);
    ~Progress();
    void update(std::uint64_t done, const std::string& extra = {});
    void finish(const std::string& extra = {});

private:
    void draw(std::uint64_t done, const std::string& extra, bool final);
    std::string m_verb;
    std::uint64_t m_total;
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_lastDraw;
    bool m_tty;
    bool m_finished = false;
};

/// How many columns `text` takes on a terminal: its UTF-8 code points.
std::size_t displayWidth(std::string_view text);
/// The marker of a value shortened in the middle.
inline constexpr std::string_view kElision = "...";
/// `text` in at most `width` columns: itself when it fits, else its start and its end with
/// kElision between them ("replay:/home/ana/...mo/sgemm-h200-2048.t4.json.gz").
std::string elideMiddle(std::string_view text, std::size_t width);
/// `text` after `lead` (e.g. "  backend     "), in lines of at most `width` columns broken at
/// spaces, the lines after the first indented as deep as `lead`; a word longer than a line (a
/// path) is elided in the middle, and `elided` (when given) set. Ends with a newline.
std::string fitLines(std::string_view lead, std::string_view text, std::size_t width, bool* elided = nullptr);

/// A plain-text table: a header row, columns padded to their widest cell; numeric columns
/// (those marked) right-aligned.
class TextTable {
public:
    explicit TextTable(std::vector<std::string> headers, std::vector<bool> rightAligned = {});
    void addRow(std::vector<std::string> cells);
    std::size_t rows() const { return m_rows.size(); }
    std::string render(int indent = 2) const;

    /// Lets renderFitting() shorten `column`'s cells in the middle, to no fewer than `minWidth`
    /// columns (nor fewer than its header's).
    void setElidable(std::size_t column, std::size_t minWidth);
    /// render() in at most `width` columns: the elidable columns shortened first (the widest
    /// first), then the columns that still do not fit continue in further blocks below the first,
    /// a blank line between, each block starting with the first `keyColumns` columns again.
    /// `elided` (when given) says whether a cell was shortened.
    std::string renderFitting(std::size_t width, int indent = 2, std::size_t keyColumns = 1,
                              bool* elided = nullptr) const;

private:
    std::string renderColumns(const std::vector<std::size_t>& columns, const std::vector<std::size_t>& widths,
                              int indent, bool* elided) const;

    std::vector<std::string> m_headers;
    std::vector<bool> m_right;
    std::vector<std::size_t> m_minWidth; // 0: not elidable
    std::vector<std::vector<std::string>> m_rows;
};

/// Checks of numeric options, run on the text before CLI11 converts it, so that what a conversion
/// would accept or wrap (nan, inf, -1 into an unsigned option, 1e3 or 2.5 into a whole number, a
/// number past the type's range) is refused with what the option expects; CLI11 prefixes the
/// option's name, and main() exits with kBadInput.
/// A whole number from `min` to `max`, written in decimal.
CLI::Validator wholeNumber(std::uint64_t min, std::uint64_t max);
/// wholeNumber()'s `max` for no upper bound but the type's.
inline constexpr std::uint64_t kAny = std::numeric_limits<std::uint64_t>::max();
/// The most compile threads an option asks for.
inline constexpr std::uint64_t kMaxJobs = 1024;
/// A finite number greater than 0 (seconds, for example).
CLI::Validator positiveNumber();
/// A fraction of the space: a number greater than 0 and at most 1.
CLI::Validator fractionOfSpace();

/// Prints the launch warnings of `problem` at `shape` (analysis/launchcheck.h) to stderr, one
/// "warning: FILE: POINTER: ..." each; returns how many.
std::size_t printLaunchWarnings(const TuningProblem& problem, std::size_t shape, const ConfigSpace& space,
                                const std::string& path);
/// Notes for the user (a backend's, the engine's) as "note: ..." lines on stderr, after `who` ("" or
/// "rank 2: ").
std::function<void(const std::string&)> stderrNotes(std::string who = {});
/// "a, b,c" -> {"a", "b", "c"}: comma-separated items, trimmed, empty ones dropped.
std::vector<std::string> splitList(const std::string& text);
/// A parameter value for people: a string without quotes, anything else as Python writes it.
std::string plainValue(const expr::Value& value);
/// The positional PROBLEM of the commands that read one.
void addProblemArgument(CLI::App* command, std::string& path);
/// --shape I, with checkShape() to check it once the problem is read.
void addShapeOption(CLI::App* command, std::size_t& shape);
/// --rank-by occupancy|registers|spills: how results analysed, not timed (the analysis backend's),
/// rank; `what` ends the help's first sentence ("the summary's best", "the results shown").
void addRankByOption(CLI::App* command, StaticRank& rank, const std::string& what);

} // namespace tilescope::cli
