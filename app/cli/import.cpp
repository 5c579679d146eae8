// tilescope-cli import: results recorded elsewhere into a results database, as sessions that
// show, export and replay use: T4 results files, Kernel Tuner caches, other Tilescope databases.

#include "cli.h"

#include "base/error.h"
#include "exchange/detection.h"
#include "exchange/parts.h"
#include "exchange/recording.h"
#include "store/resultstore.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace tilescope::cli {

namespace {

struct ImportOptions {
    std::vector<std::string> files;
    std::string db;
    bool keepDuplicates = false;
};

int runImport(const ImportOptions& opt) {
    // Read and validate everything before touching the database: a bad file changes nothing.
    struct Read {
        std::string file;
        RecordingFormat format;
        std::vector<SessionData> sessions;
    };
    std::vector<Read> reads;
    for (const std::string& file : opt.files)
        reads.push_back({file, detectRecordingFormat(file), readRecording(file)});
    ResultStore store = ResultStore::open(opt.db, StoreMode::ReadWrite);

    // What the database holds already, by what each session measured: a session read twice (the
    // same file again, or a database merged into another twice) goes in once.
    std::map<std::string, std::int64_t> held;
    if (!opt.keepDuplicates)
        for (const SessionInfo& s : store.sessions())
            held.emplace(sessionFingerprint({s, store.results(s.id)}), s.id);
    // The parts of a sweep split across tasks (tune --part) become one session.
    std::vector<SessionData> all;
    std::vector<const Read*> readOf; // per session read
    for (Read& read : reads)
        for (SessionData& data : read.sessions) {
            all.push_back(std::move(data));
            readOf.push_back(&read);
        }
    std::vector<std::vector<std::size_t>> from;
    std::vector<SessionData> sessions = joinParts(std::move(all), &from);

    std::size_t imported = 0;
    std::size_t skipped = 0;
    for (std::size_t k = 0; k < sessions.size(); ++k) {
        SessionData& data = sessions[k];
        const Read& read = *readOf[from[k].front()];
        std::string source = read.file;
        for (std::size_t j = 1; j < from[k].size(); ++j)
            source += " + " + readOf[from[k][j]]->file;
        const std::size_t n = data.results.size();
        const std::string kernel = data.info.kernel;
        const std::string joined = from[k].size() > 1 ? "; " + data.info.message : std::string();
        const std::string fingerprint = opt.keepDuplicates ? std::string() : sessionFingerprint(data);
        if (const auto it = held.find(fingerprint); it != held.end()) {
            std::printf("skipped %s results of %s%s: the same as session %lld of %s\n", formatCount(double(n)).c_str(),
                        source.c_str(),
                        read.format == RecordingFormat::TilescopeDatabase && from[k].size() == 1
                            ? (" (session " + std::to_string(data.info.id) + ")").c_str()
                            : "",
                        static_cast<long long>(it->second), opt.db.c_str());
            ++skipped;
            continue;
        }
        const auto implausible = std::count_if(data.results.begin(), data.results.end(), [](const ResultRecord& r) {
            return r.status() == ResultStatus::Implausible;
        });
        const std::int64_t id = importSession(store, std::move(data), source);
        if (!opt.keepDuplicates)
            held.emplace(fingerprint, id);
        ++imported;
        std::printf("imported %s results of %s (%s%s%s) as session %lld\n", formatCount(double(n)).c_str(),
                    source.c_str(), recordingFormatName(read.format).c_str(),
                    kernel.empty() ? "" : (", kernel " + kernel).c_str(), joined.c_str(), static_cast<long long>(id));
        if (implausible > 0)
            std::printf(
                "  %s implausible: a time that cannot be right (tilescope-cli show %s --session %lld says why)\n",
                formatCount(double(implausible)).c_str(), opt.db.c_str(), static_cast<long long>(id));
    }
    if (opt.files.size() > 1 || skipped > 0)
        std::printf("%s: %zu session%s imported, %zu already there\n", opt.db.c_str(), imported,
                    imported == 1 ? "" : "s", skipped);
    return kOk;
}

} // namespace

void registerImport(CLI::App& app) {
    auto opt = std::make_shared<ImportOptions>();
    CLI::App* cmd = app.add_subcommand("import", "Import recorded results (T4 results files, Kernel Tuner caches, "
                                                 "other Tilescope databases) into a results database, each session "
                                                 "once, with its provenance");
    readsFile(
        cmd->add_option("files", opt->files,
                        "The recordings (several merge into one database: the databases of a Slurm job array's tasks, "
                        "say; the parts of a sweep split with tune --part become one session)"))
        ->required();
    writesFile(cmd->add_option("--db", opt->db, "The results database (created when missing)"), "--db")->required();
    cmd->add_flag("--keep-duplicates", opt->keepDuplicates,
                  "Import a session even when the database holds one that measured the same (by default it is "
                  "skipped: same kernel, shape, device, strategy, seed and results)");
    setAction(cmd, [opt] { return runImport(*opt); });
}

} // namespace tilescope::cli
