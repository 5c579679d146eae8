#include "cli.h"

#include "analysis/launchcheck.h"
#include "base/error.h"
#include "base/filewrite.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace tilescope::cli {

Progress::Progress(std::string verb, std::uint64_t total)
    : m_verb(std::move(verb))
    , m_total(total)
    , m_start(std::chrono::steady_clock::now())
    , m_lastDraw(m_start - std::chrono::seconds(1))
    , m_tty(isatty(fileno(stderr)) != 0) {}

Progress::~Progress() {
    if (!m_finished && m_tty)
        std::fputc('\n', stderr);
}

void Progress::update(std::uint64_t done, const std::string& extra) {
    const auto now = std::chrono::steady_clock::now();
    if (!m_tty || now - m_lastDraw < std::chrono::milliseconds(100))
        return;
    m_lastDraw = now;
    draw(done, extra, false);
}

void Progress::finish(const std::string& extra) {
    if (m_finished)
        return;
    m_finished = true;
    draw(m_total, extra, true);
}

void Progress::draw(std::uint64_t done, const std::string& extra, bool final) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    std::string line =
        m_verb + " " + formatCount(static_cast<double>(done)) + "/" + formatCount(static_cast<double>(m_total));
    char buf[96];
    if (rate > 0) {
        std::snprintf(buf, sizeof buf, "  %.1f/s", rate);
        line += buf;
    }
    if (final) {
        line += "  in " + formatDuration(elapsed);
    } else if (rate > 0 && done < m_total) {
        line += "  ETA " + formatDuration(static_cast<double>(m_total - done) / rate);
    }
    if (!extra.empty())
        line += "  " + extra;
    if (m_tty)
        std::fprintf(stderr, "\r\033[K%s%s", line.c_str(), final ? "\n" : "");
    else if (final)
        std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
}

TextTable::TextTable(std::vector<std::string> headers, std::vector<bool> rightAligned)
    : m_headers(std::move(headers))
    , m_right(std::move(rightAligned)) {
    m_right.resize(m_headers.size(), false);
}

void TextTable::addRow(std::vector<std::string> cells) {
    cells.resize(m_headers.size());
    m_rows.push_back(std::move(cells));
}

std::string TextTable::render(int indent) const {
    std::vector<std::size_t> width(m_headers.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t c = 0; c < row.size(); ++c)
            width[c] = std::max(width[c], row[c].size());
    };
    measure(m_headers);
    for (const auto& row : m_rows)
        measure(row);
    std::string out;
    auto emitRow = [&](const std::vector<std::string>& row) {
        std::string line(static_cast<std::size_t>(indent), ' ');
        for (std::size_t c = 0; c < row.size(); ++c) {
            const std::string pad(width[c] - row[c].size(), ' ');
            line += m_right[c] ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : "");
            if (c + 1 < row.size())
                line += "  ";
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    };
    emitRow(m_headers);
    for (const auto& row : m_rows)
        emitRow(row);
    return out;
}

namespace {

// The number's text without one leading '+' (which CLI11's conversion accepts too).
std::string_view withoutPlus(std::string_view text) {
    if (!text.empty() && text.front() == '+')
        text.remove_prefix(1);
    return text;
}

std::string inQuotes(const std::string& text) {
    return "'" + text + "'";
}

// A finite decimal number, or nullopt (nan, inf, words, trailing characters).
std::optional<double> finiteNumber(const std::string& input) {
    const std::string_view text = withoutPlus(input);
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

} // namespace

CLI::Validator wholeNumber(std::uint64_t min, std::uint64_t max) {
    const bool unbounded = max == std::numeric_limits<std::uint64_t>::max();
    const std::string range = unbounded ? "a whole number, at least " + std::to_string(min)
                                        : "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
    return CLI::Validator(
        [min, max, range](std::string& input) -> std::string {
            const std::string_view text = withoutPlus(input);
            std::uint64_t value = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (text.empty() || error == std::errc::invalid_argument || end != text.data() + text.size())
                return "expected " + range + ", got " + inQuotes(input);
            if (error == std::errc::result_out_of_range || value < min || value > max)
                return "expected " + range + ", got " + inQuotes(input) + " (out of range)";
            return {};
        },
        unbounded ? "INT >= " + std::to_string(min)
                  : "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
        "WHOLE");
}

CLI::Validator positiveNumber() {
    return CLI::Validator(
        [](std::string& input) -> std::string {
            const std::optional<double> value = finiteNumber(input);
            if (!value || !(*value > 0))
                return "expected a finite number greater than 0, got " + inQuotes(input);
            return {};
        },
        "NUMBER > 0", "POSITIVE");
}

CLI::Validator fractionOfSpace() {
    return CLI::Validator(
        [](std::string& input) -> std::string {
            const std::optional<double> value = finiteNumber(input);
            if (!value || !(*value > 0 && *value <= 1))
                return "expected a fraction of the space greater than 0 and at most 1 (0.1 is a tenth), got " +
                       inQuotes(input);
            return {};
        },
        "FRACTION in (0, 1]", "FRACTION");
}

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        std::string piece = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        piece.erase(0, piece.find_first_not_of(" \t"));
        piece.erase(piece.find_last_not_of(" \t") + 1);
        if (!piece.empty())
            out.push_back(piece);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return out;
}

std::string plainValue(const expr::Value& value) {
    return value.kind == expr::Kind::Str ? *value.s : expr::repr(value);
}

std::function<void(const std::string&)> stderrNotes(std::string who) {
    return [who = std::move(who)](const std::string& text) {
        std::fprintf(stderr, "%snote: %s\n", who.c_str(), text.c_str());
    };
}

void checkShape(const TuningProblem& problem, std::size_t shape) {
    const std::size_t shapes = std::max<std::size_t>(problem.shapes.size(), 1);
    if (shape >= shapes)
        throw InputError(problem.fileName, "--shape",
                         "shape " + std::to_string(shape) + " does not exist; the problem has " +
                             std::to_string(shapes) + " shape(s), numbered from 0");
}

void addProblemArgument(CLI::App* command, std::string& path) {
    readsFile(
        command->add_option("problem", path, "A tuning problem in T1 JSON (for example kernels/sgemm/sgemm.json)"))
        ->required();
}

namespace {

struct FileOption {
    CLI::Option* option;
    std::string location; // an output's, for messages
    bool output;
};

std::vector<FileOption>& fileOptions() {
    static std::vector<FileOption> all;
    return all;
}

} // namespace

CLI::Option* readsFile(CLI::Option* option) {
    fileOptions().push_back({option, {}, false});
    return option;
}

CLI::Option* writesFile(CLI::Option* option, std::string location) {
    fileOptions().push_back({option, std::move(location), true});
    return option;
}

void refuseOutputsThatAreInputs() {
    // Only the options of the command that runs were given values.
    std::vector<std::filesystem::path> inputs;
    for (const FileOption& f : fileOptions())
        if (!f.output)
            for (const std::string& value : f.option->results())
                inputs.emplace_back(value);
    const std::string why = ", which this command reads: writing it would destroy what it reads";
    for (const FileOption& f : fileOptions()) {
        if (!f.output)
            continue;
        for (const std::string& value : f.option->results())
            if (value != "-")
                if (const auto input = inputThatIs(value, inputs))
                    throw InputError(value, f.location,
                                     "the same file as " + input->string() + why + " (give another file)");
    }
    // Standard output sent to a file by the shell (`>> FILE`; `>` has emptied it already).
    struct stat out {};
    if (::fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode))
        if (const auto input = inputThatIs("/dev/stdout", inputs))
            throw InputError("", "",
                             "standard output goes to " + input->string() + ", the same file as an input" + why +
                                 " (send it elsewhere)");
}

void addShapeOption(CLI::App* command, std::size_t& shape) {
    command->add_option("--shape", shape, "Which of the problem's shapes (Tilescope.Shapes), numbered from 0")
        ->capture_default_str()
        ->check(wholeNumber(0, kAny));
}

std::size_t printLaunchWarnings(const TuningProblem& problem, std::size_t shape, const ConfigSpace& space,
                                const std::string& path) {
    const std::vector<LaunchWarning> warnings = checkLaunch(problem, shape, space);
    for (const LaunchWarning& w : warnings)
        std::fprintf(stderr, "warning: %s: %s: %s\n", path.c_str(), w.location.c_str(), w.message.c_str());
    return warnings.size();
}

} // namespace tilescope::cli
