// tilescope-cli import: results recorded elsewhere into a results database, as sessions that
// show, export and replay use: T4 results files, Kernel Tuner caches, other Tilescope databases.

#include "cli.h"

#include "base/error.h"
#include "exchange/exchange.h"
#include "store/resultstore.h"

#include <cstdio>

namespace tilescope::cli {

namespace {

struct ImportOptions {
    std::string file;
    std::string db;
};

int runImport(const ImportOptions& opt) {
    // Read and validate everything before touching the database: a bad file changes nothing.
    const RecordingFormat format = detectRecordingFormat(opt.file);
    std::vector<SessionData> sessions = readRecording(opt.file);
    ResultStore store = ResultStore::open(opt.db, StoreMode::ReadWrite);
    for (SessionData& data : sessions) {
        const std::size_t n = data.results.size();
        const std::string kernel = data.info.kernel;
        const std::int64_t id = importSession(store, std::move(data), opt.file);
        std::printf("imported %s results of %s (%s%s) as session %lld\n", formatCount(double(n)).c_str(),
                    opt.file.c_str(), recordingFormatName(format).c_str(),
                    kernel.empty() ? "" : (", kernel " + kernel).c_str(), static_cast<long long>(id));
    }
    return kOk;
}

} // namespace

void registerImport(CLI::App& app) {
    auto opt = std::make_shared<ImportOptions>();
    CLI::App* cmd = app.add_subcommand("import", "Import recorded results (a T4 results file, a Kernel Tuner cache, "
                                                 "another Tilescope database) into a results database");
    cmd->add_option("file", opt->file, "The recording")->required();
    cmd->add_option("--db", opt->db, "The results database (created when missing)")->required();
    setAction(cmd, [opt] { return runImport(*opt); });
}

} // namespace tilescope::cli
