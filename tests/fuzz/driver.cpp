// A fuzzing driver for compilers without libFuzzer (the sanitizer builds made with g++): runs
// every input of a corpus, then mutations of them (bit flips, bytes set, inserted, deleted or
// repeated, tokens of JSON and of the expression language, a JSON number or string replaced by a
// value that recordings must refuse or read right, splices of two inputs, truncation)
// for a number of runs or seconds. Not coverage-guided; with clang, the same harnesses link with
// libFuzzer instead (TILESCOPE_LIBFUZZER). An input that crashes, aborts or runs past the
// timeout is written to ARTIFACTS/crash-N or ARTIFACTS/timeout-N before the program dies.
//
//   fuzz_<parser> [--runs N] [--seconds S] [--seed N] [--max-len BYTES] [--timeout S]
//                 [--artifacts DIR] CORPUS...   (files, or folders read recursively)

#include "fuzzing.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

namespace fs = std::filesystem;

// The input being run, for the handlers (which may only use async-signal-safe calls).
const std::uint8_t* g_input = nullptr;
std::size_t g_inputSize = 0;
char g_crashPath[4096] = "crash-input";
char g_timeoutPath[4096] = "timeout-input";

void writeInput(const char* path) {
    const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    std::size_t done = 0;
    while (done < g_inputSize) {
        const ssize_t n = ::write(fd, g_input + done, g_inputSize - done);
        if (n <= 0)
            break;
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    const char* what = "\nfuzz: the input is saved as ";
    (void)!::write(2, what, std::strlen(what));
    (void)!::write(2, path, std::strlen(path));
    (void)!::write(2, "\n", 1);
}

void onCrash(int sig) {
    writeInput(g_crashPath);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void onTimeout(int) {
    const char* what = "\nfuzz: an input ran past the timeout (a hang)";
    (void)!::write(2, what, std::strlen(what));
    writeInput(g_timeoutPath);
    ::_exit(3);
}

#if defined(__SANITIZE_ADDRESS__)
void onSanitizerReport() {
    writeInput(g_crashPath);
}
#endif

using Bytes = std::vector<std::uint8_t>;

// Tokens worth inserting: JSON's and the expression language's, and numbers at the edges.
const std::array<const char*, 40> kTokens = {"{",
                                             "}",
                                             "[",
                                             "]",
                                             ":",
                                             ",",
                                             "\"",
                                             "null",
                                             "true",
                                             "false",
                                             "NaN",
                                             "Infinity",
                                             "-Infinity",
                                             "1e308",
                                             "1e999",
                                             "-0",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "-9223372036854775809",
                                             "0.5",
                                             "\"\\u0000\"",
                                             "((((((((",
                                             "))))",
                                             "**",
                                             "//",
                                             "%",
                                             "<<",
                                             " not ",
                                             " and ",
                                             " or ",
                                             " in ",
                                             " for i in ",
                                             "range(",
                                             "min(",
                                             "len(",
                                             "'",
                                             "[[[[[[[[",
                                             "\"Values\": ",
                                             "\"Name\": ",
                                             "\"Expression\": "};

// What a JSON value (a number or a string) is replaced with: the values a recording's time and
// status fields must refuse or read right (negative, zero, past 64 bits, unknown statuses, Kernel
// Tuner's failure markers and Tilescope's status names), and values of other types.
const std::array<const char*, 26> kScalars = {"-5.0",
                                              "0",
                                              "0.0",
                                              "-0.0",
                                              "-1",
                                              "1e-320",
                                              "1e306",
                                              "1180591620717411303424",
                                              "-1180591620717411303424",
                                              "9223372036854775808",
                                              "\"ok\"",
                                              "\"bogus\"",
                                              "\"fast\"",
                                              "\"\"",
                                              "\"InvalidConfig\"",
                                              "\"CompilationFailedConfig\"",
                                              "\"RuntimeFailedConfig\"",
                                              "\"ErrorConfig\"",
                                              "\"skipped\"",
                                              "\"implausible\"",
                                              "\"compile\"",
                                              "\"correct\"",
                                              "null",
                                              "true",
                                              "{}",
                                              "[]"};

// Where the JSON string or number at or after `from` starts and ends (end exclusive), skipping to
// the end of a string that `from` falls in; nullopt when there is none.
std::optional<std::pair<std::size_t, std::size_t>> scalarAfter(const Bytes& b, std::size_t from) {
    bool inString = false;
    for (std::size_t i = 0; i < from && i < b.size(); ++i) {
        if (inString && b[i] == '\\')
            ++i;
        else if (b[i] == '"')
            inString = !inString;
    }
    std::size_t i = from;
    if (inString) {
        while (i < b.size() && b[i] != '"')
            i += b[i] == '\\' ? 2 : 1;
        ++i;
    }
    const auto numeric = [](std::uint8_t c) { return std::strchr("-+.eE0123456789", c) != nullptr && c != 0; };
    for (; i < b.size(); ++i) {
        if (b[i] == '"') {
            std::size_t end = i + 1;
            while (end < b.size() && b[end] != '"')
                end += b[end] == '\\' ? 2 : 1;
            return std::make_pair(i, std::min(end + 1, b.size()));
        }
        if (b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) {
            std::size_t end = i;
            while (end < b.size() && numeric(b[end]))
                ++end;
            return std::make_pair(i, end);
        }
    }
    return std::nullopt;
}

class Mutator {
public:
    explicit Mutator(std::uint64_t seed)
        : m_rng(seed) {}

    Bytes mutate(const std::vector<Bytes>& corpus, std::size_t maxLen) {
        Bytes b = corpus[pick(corpus.size())];
        const std::size_t rounds = 1 + pick(4);
        for (std::size_t r = 0; r < rounds; ++r)
            step(b, corpus);
        if (b.size() > maxLen)
            b.resize(maxLen);
        return b;
    }

private:
    std::size_t pick(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(m_rng); }

    void step(Bytes& b, const std::vector<Bytes>& corpus) {
        const std::size_t at = pick(b.size() + 1);
        switch (pick(10)) {
        case 0: // flip a bit
            if (!b.empty())
                b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
            break;
        case 1: // set a byte
            if (!b.empty())
                b[pick(b.size())] = static_cast<std::uint8_t>(pick(256));
            break;
        case 2: // insert a byte
            b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(pick(256)));
            break;
        case 3: { // delete a range
            const std::size_t n = std::min(b.size() - std::min(at, b.size()), 1 + pick(16));
            b.erase(b.begin() + static_cast<std::ptrdiff_t>(std::min(at, b.size())),
                    b.begin() + static_cast<std::ptrdiff_t>(std::min(at, b.size()) + n));
            break;
        }
        case 4: { // repeat a range
            if (b.empty())
                break;
            const std::size_t from = pick(b.size());
            const std::size_t n = std::min(b.size() - from, 1 + pick(64));
            const Bytes piece(b.begin() + static_cast<std::ptrdiff_t>(from),
                              b.begin() + static_cast<std::ptrdiff_t>(from + n));
            const std::size_t times = 1 + pick(pick(2) ? 4 : 256);
            for (std::size_t t = 0; t < times; ++t)
                b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), piece.begin(), piece.end());
            break;
        }
        case 5:
        case 6: { // insert a token
            const char* token = kTokens[pick(kTokens.size())];
            b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), token, token + std::strlen(token));
            break;
        }
        case 7: { // splice: this input's head, another's tail
            const Bytes& other = corpus[pick(corpus.size())];
            const std::size_t from = pick(other.size() + 1);
            b.resize(std::min(at, b.size()));
            b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
            break;
        }
        case 8: { // replace a JSON value: a time, a status, a parameter's value
            if (const auto span = scalarAfter(b, at)) {
                const char* token = kScalars[pick(kScalars.size())];
                b.erase(b.begin() + static_cast<std::ptrdiff_t>(span->first),
                        b.begin() + static_cast<std::ptrdiff_t>(span->second));
                b.insert(b.begin() + static_cast<std::ptrdiff_t>(span->first), token, token + std::strlen(token));
            }
            break;
        }
        default: // truncate
            b.resize(std::min(at, b.size()));
        }
    }

    std::mt19937_64 m_rng;
};

Bytes readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void run(const Bytes& input, unsigned timeoutSeconds) {
    g_input = input.data();
    g_inputSize = input.size();
    ::alarm(timeoutSeconds);
    LLVMFuzzerTestOneInput(input.data(), input.size());
    ::alarm(0);
}

int usage(const char* program, int status) {
    std::fprintf(status ? stderr : stdout,
                 "usage: %s [--runs N] [--seconds S] [--seed N] [--max-len BYTES] [--timeout S] [--artifacts DIR] "
                 "CORPUS...\n"
                 "Runs every corpus input, then mutations of them until N runs (default 10000) or S seconds,\n"
                 "whichever comes first. A crash or hang saves its input in DIR (default: here) and fails.\n",
                 program);
    return status;
}

} // namespace

int main(int argc, char** argv) {
    std::uint64_t runs = 10000, seed = 1;
    double seconds = 0;
    std::size_t maxLen = 64 * 1024;
    unsigned timeout = 60; // seconds; a legitimate input that does the most work the limits allow takes about 1 s
                           // optimised, 10 or more under the sanitizers
    fs::path artifacts = ".";
    std::vector<fs::path> inputs;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s: %s needs a value\n", argv[0], a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        try {
            if (a == "--runs")
                runs = std::stoull(value());
            else if (a == "--seconds")
                seconds = std::stod(value());
            else if (a == "--seed")
                seed = std::stoull(value());
            else if (a == "--max-len")
                maxLen = std::stoull(value());
            else if (a == "--timeout")
                timeout = static_cast<unsigned>(std::stoul(value()));
            else if (a == "--artifacts")
                artifacts = value();
            else if (a == "--help" || a == "-h")
                return usage(argv[0], 0);
            else if (a.rfind("--", 0) == 0)
                return usage(argv[0], 2);
            else
                inputs.emplace_back(a);
        } catch (const std::exception&) {
            std::fprintf(stderr, "%s: %s: not a number\n", argv[0], a.c_str());
            return 2;
        }
    }
    std::vector<Bytes> corpus;
    for (const fs::path& p : inputs) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<fs::path> files;
            for (const auto& e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file())
                    files.push_back(e.path());
            std::sort(files.begin(), files.end()); // the same order, and so the same runs, everywhere
            for (const fs::path& f : files)
                corpus.push_back(readFile(f));
        } else if (fs::is_regular_file(p, ec)) {
            corpus.push_back(readFile(p));
        } else {
            std::fprintf(stderr, "%s: %s: no such file or folder\n", argv[0], p.c_str());
            return 2;
        }
    }
    if (corpus.empty())
        corpus.emplace_back();
    fs::create_directories(artifacts);
    const std::string stem = fs::path(argv[0]).filename().string() + "-" + std::to_string(::getpid());
    std::snprintf(g_crashPath, sizeof g_crashPath, "%s", (artifacts / ("crash-" + stem)).c_str());
    std::snprintf(g_timeoutPath, sizeof g_timeoutPath, "%s", (artifacts / ("timeout-" + stem)).c_str());
    for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL})
        std::signal(sig, onCrash);
    std::signal(SIGALRM, onTimeout);
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_set_death_callback(onSanitizerReport);
#endif

    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    for (const Bytes& input : corpus)
        run(input, timeout);
    Mutator mutator(seed);
    std::uint64_t done = corpus.size();
    while (done < runs && (seconds <= 0 || elapsed() < seconds)) {
        run(mutator.mutate(corpus, maxLen), timeout);
        ++done;
    }
    const double s = elapsed();
    std::printf("%s: %llu inputs (a corpus of %zu, seed %llu) in %.1f s, %.0f/s: no crash, hang or sanitizer "
                "report\n",
                fs::path(argv[0]).filename().c_str(), static_cast<unsigned long long>(done), corpus.size(),
                static_cast<unsigned long long>(seed), s, double(done) / std::max(s, 1e-9));
    return 0;
}
