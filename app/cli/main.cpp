// tilescope-cli: the command-line face of Tilescope. Wiring only: each subcommand parses its
// options and calls the engine in core/.

#include "cli.h"

#include "base/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>

namespace tilescope::cli {

namespace {
std::map<const CLI::App*, Action>& actions() {
    static std::map<const CLI::App*, Action> registry;
    return registry;
}
} // namespace

void setAction(CLI::App* subcommand, Action action) {
    actions()[subcommand] = std::move(action);
}

/// `tilescope-cli lab ...` (lab.cpp)
void registerLab(CLI::App& app);
/// `tilescope-cli table ...` (table.cpp)
void registerTable(CLI::App& app);
void registerCheck(CLI::App& app);
void registerKt(CLI::App& app);
void registerTriton(CLI::App& app);

namespace {

// A write to standard output that fails (a full disk, a file past its size limit, a closed
// descriptor) is only noted in the stream's error flag by printf and std::cout, and what is still
// buffered fails at exit unseen: checked here once, for every command and its help, when it is
// done. Its status stands when it failed already; else a lost output is bad input (exit 2).
int checkStandardOutput(int status) {
    errno = 0;
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0;
    const int error = errno;
    if (flushed && !std::ferror(stdout) && !std::cout.bad())
        return status;
    std::fprintf(stderr, "error: cannot write to standard output%s%s: what the command printed is incomplete\n",
                 error ? ": " : "", error ? std::strerror(error) : "");
    return status == kOk ? kBadInput : status;
}

int run(int argc, char** argv) {
    CLI::App app{"Tilescope: a workbench for autotuning CUDA kernels.\n"
                 "Explore a tuning problem's config space, analyse register spilling and occupancy\n"
                 "offline, tune on the GPU and export the winners.",
                 "tilescope-cli"};
    app.set_version_flag("--version", std::string("tilescope-cli ") + TILESCOPE_VERSION);
    app.require_subcommand(1);
    app.footer("Run 'tilescope-cli COMMAND --help' for a command's options.\n"
               "Exit status: 0 ok, 1 internal error, 2 bad input (the message says what and where).\n");
    registerSpace(app);
    registerAnalyze(app);
    registerTune(app);
    registerShow(app);
    registerExport(app);
    registerImport(app);
    registerLab(app);
    registerTable(app);
    registerCheck(app);
    registerCompare(app);
    registerKt(app);
    registerTriton(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e); // prints the message and a hint
        return kBadInput;
    }

    for (const CLI::App* sub : app.get_subcommands()) {
        const auto it = actions().find(sub);
        if (it == actions().end())
            continue;
        try {
            refuseOutputsThatAreInputs();
            return it->second();
        } catch (const tilescope::InputError& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            return kBadInput;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "internal error: %s\n", e.what());
            return kInternalError;
        }
    }
    return kInternalError;
}

} // namespace

} // namespace tilescope::cli

int main(int argc, char** argv) {
    return tilescope::cli::checkStandardOutput(tilescope::cli::run(argc, argv));
}
