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
#include <map>
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

std::size_t displayWidth(std::string_view text) {
    std::size_t width = 0;
    for (const char c : text)
        width += (static_cast<unsigned char>(c) & 0xC0) != 0x80; // continuation bytes take no column
    return width;
}

namespace {

// The byte offset after the first `points` code points of `text`.
std::size_t bytesOfPoints(std::string_view text, std::size_t points) {
    std::size_t i = 0;
    for (std::size_t seen = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80)
            continue;
        if (seen++ == points)
            return i;
    }
    return text.size();
}

} // namespace

std::string elideMiddle(std::string_view text, std::size_t width) {
    const std::size_t have = displayWidth(text);
    if (have <= width)
        return std::string(text);
    if (width <= kElision.size())
        return std::string(kElision.substr(0, width));
    if (text.find('/') != std::string_view::npos) {
        // A path ("replay:/home/ana/runs/sgemm.t4.json.gz"): its scheme, then as much of its end as
        // fits, from a '/' where one fits ("replay:.../runs/sgemm.t4.json.gz"): the file names it.
        const std::size_t colon = text.find(':');
        const std::string_view scheme =
            colon != std::string_view::npos && colon < text.find('/') ? text.substr(0, colon + 1) : std::string_view();
        if (displayWidth(scheme) + kElision.size() < width) {
            const std::size_t room = width - displayWidth(scheme) - kElision.size();
            std::string_view tail = text.substr(bytesOfPoints(text, have - room));
            if (const std::size_t slash = tail.find('/'); slash != std::string_view::npos && slash + 1 < tail.size())
                tail = tail.substr(slash);
            return std::string(scheme) + std::string(kElision) + std::string(tail);
        }
    }
    // The end keeps a little more: a config's last parameters, a message's last words.
    const std::size_t room = width - kElision.size();
    const std::size_t head = room / 2;
    const std::size_t tail = room - head;
    return std::string(text.substr(0, bytesOfPoints(text, head))) + std::string(kElision) +
           std::string(text.substr(bytesOfPoints(text, have - tail)));
}

std::string fitLines(std::string_view lead, std::string_view text, std::size_t width, bool* elided) {
    const std::size_t indent = displayWidth(lead);
    const std::size_t room = width > indent + 8 ? width - indent : 8;
    std::string out(lead);
    std::size_t used = 0; // columns of the current line after the indent
    std::size_t pos = 0;
    bool space = false; // a space is owed before the next word (runs of spaces are kept within a line)
    while (pos < text.size()) {
        const std::size_t next = text.find(' ', pos);
        const std::string_view word = text.substr(pos, next == std::string_view::npos ? text.size() - pos : next - pos);
        pos = next == std::string_view::npos ? text.size() : next + 1;
        if (word.empty()) { // a second space in a row
            if (used > 0 && used < room) {
                out += ' ';
                ++used;
            }
            continue;
        }
        const std::string piece = elideMiddle(word, room);
        if (elided && piece.size() != word.size())
            *elided = true;
        const std::size_t w = displayWidth(piece);
        if (used > 0 && used + (space ? 1 : 0) + w > room) {
            while (!out.empty() && out.back() == ' ')
                out.pop_back();
            out += "\n" + std::string(indent, ' ');
            used = 0;
        } else if (used > 0 && space) {
            out += ' ';
            ++used;
        }
        out += piece;
        used += w;
        space = true;
    }
    return out + "\n";
}

TextTable::TextTable(std::vector<std::string> headers, std::vector<bool> rightAligned)
    : m_headers(std::move(headers))
    , m_right(std::move(rightAligned)) {
    m_right.resize(m_headers.size(), false);
    m_minWidth.resize(m_headers.size(), 0);
}

void TextTable::addRow(std::vector<std::string> cells) {
    cells.resize(m_headers.size());
    m_rows.push_back(std::move(cells));
}

void TextTable::setElidable(std::size_t column, std::size_t minWidth) {
    if (column < m_minWidth.size())
        m_minWidth[column] = std::max<std::size_t>(minWidth, 1);
}

std::string TextTable::renderColumns(const std::vector<std::size_t>& columns, const std::vector<std::size_t>& widths,
                                     int indent, bool* elided) const {
    std::string out;
    auto emitRow = [&](const std::vector<std::string>& row) {
        std::string line(static_cast<std::size_t>(indent), ' ');
        for (std::size_t k = 0; k < columns.size(); ++k) {
            const std::size_t c = columns[k];
            const std::string cell = elideMiddle(row[c], widths[c]);
            if (elided && cell.size() != row[c].size())
                *elided = true;
            const std::string pad(widths[c] - displayWidth(cell), ' ');
            const bool last = k + 1 == columns.size();
            line += m_right[c] ? pad + cell : cell + (last ? "" : pad);
            if (!last)
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

std::vector<std::size_t> naturalWidths(const std::vector<std::string>& headers,
                                       const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width(headers.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t c = 0; c < row.size(); ++c)
            width[c] = std::max(width[c], displayWidth(row[c]));
    };
    measure(headers);
    for (const auto& row : rows)
        measure(row);
    return width;
}

} // namespace

std::string TextTable::render(int indent) const {
    std::vector<std::size_t> all(m_headers.size());
    for (std::size_t c = 0; c < all.size(); ++c)
        all[c] = c;
    return renderColumns(all, naturalWidths(m_headers, m_rows), indent, nullptr);
}

std::string TextTable::renderFitting(std::size_t width, int indent, std::size_t keyColumns, bool* elided) const {
    std::vector<std::size_t> widths = naturalWidths(m_headers, m_rows);
    const std::size_t n = m_headers.size();
    keyColumns = std::min(keyColumns, n);
    const auto lineWidth = [&](const std::vector<std::size_t>& columns) {
        std::size_t w = static_cast<std::size_t>(indent);
        for (std::size_t k = 0; k < columns.size(); ++k)
            w += widths[columns[k]] + (k > 0 ? 2 : 0);
        return w;
    };
    std::vector<std::size_t> all(n);
    for (std::size_t c = 0; c < n; ++c)
        all[c] = c;
    // Shorten the widest elidable column a column at a time until the line fits or none can give.
    for (std::size_t total = lineWidth(all); total > width; --total) {
        std::size_t widest = n;
        for (std::size_t c = 0; c < n; ++c) {
            const std::size_t floor = std::max(m_minWidth[c], displayWidth(m_headers[c]));
            if (m_minWidth[c] > 0 && widths[c] > floor && (widest == n || widths[c] > widths[widest]))
                widest = c;
        }
        if (widest == n)
            break;
        --widths[widest];
    }
    // The columns that still do not fit go on in blocks below, each led by the key columns.
    std::vector<std::size_t> keys(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keyColumns));
    std::string out;
    std::size_t next = keyColumns;
    do {
        std::vector<std::size_t> block = keys;
        while (next < n) {
            block.push_back(next);
            if (lineWidth(block) > width && block.size() > keys.size() + 1) {
                block.pop_back();
                break;
            }
            ++next;
        }
        out += (out.empty() ? "" : "\n") + renderColumns(block, widths, indent, elided);
    } while (next < n);
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

void addRankByOption(CLI::App* command, StaticRank& rank, const std::string& what) {
    std::map<std::string, StaticRank> names;
    std::string list;
    for (const StaticRank r : kAllStaticRanks) {
        names.emplace(std::string(staticRankName(r)), r);
        list += (list.empty() ? "" : ", ") + std::string(staticRankName(r));
    }
    command
        ->add_option("--rank-by", rank,
                     "How configs analysed but not timed (--backend analysis:ARCH) rank, and so " + what +
                         ": occupancy (the highest theoretical occupancy, then the fewest spilled bytes, then the "
                         "fewest registers), registers (the fewest registers, then spills, then occupancy) or spills "
                         "(the fewest spilled bytes, then occupancy, then registers); timed configs rank by their "
                         "time, before them")
        ->transform(CLI::CheckedTransformer(names, CLI::ignore_case).description("{" + list + "}"))
        ->default_str("occupancy");
}

std::size_t printLaunchWarnings(const TuningProblem& problem, std::size_t shape, const ConfigSpace& space,
                                const std::string& path) {
    const std::vector<LaunchWarning> warnings = checkLaunch(problem, shape, space);
    for (const LaunchWarning& w : warnings)
        std::fprintf(stderr, "warning: %s: %s: %s\n", path.c_str(), w.location.c_str(), w.message.c_str());
    return warnings.size();
}

} // namespace tilescope::cli
