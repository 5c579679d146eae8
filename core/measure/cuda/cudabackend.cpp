#include "measure/cuda/cudabackend.h"

#include "analysis/gpuarch.h"
#include "base/error.h"
#include "base/pythonfiles.h"
#include "compile/requestbuilder.h"
#include "measure/cuda/memorycheck.h"
#include "measure/cuda/workerdepot.h"
#include "measure/metricnames.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace tilescope {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kReferenceJob = ~std::uint64_t{0};
constexpr std::uint64_t kSanitizeJob = ~std::uint64_t{0} - 1;
constexpr std::size_t kStderrTail = 4000;

std::string describeExit(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char* name = ::strsignal(sig);
        return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
    }
    if (WIFEXITED(status))
        return "exited with code " + std::to_string(WEXITSTATUS(status));
    return "ended";
}

// The last line of a worker's stderr that says something, for crash reasons.
std::string lastWords(const std::string& tail) {
    std::string text = tail;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    const std::size_t newline = text.rfind('\n');
    text = newline == std::string::npos ? text : text.substr(newline + 1);
    return text.size() > 300 ? text.substr(text.size() - 300) : text;
}

void ignoreSigpipe() {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, nullptr);
    }
}

const char* guardPolicyName(GuardPolicy policy) {
    switch (policy) {
    case GuardPolicy::Off:
        return "off";
    case GuardPolicy::Reference:
        break;
    case GuardPolicy::Every:
        return "every";
    }
    return "reference";
}

Measurement failed(ResultStatus status, std::string message, int device = -1) {
    Measurement m;
    m.status = status;
    m.message = std::move(message);
    m.device = device;
    return m;
}

} // namespace

struct CudaBackend::Impl {
    struct Worker {
        int device = -1;
        pid_t pid = -1;
        int in = -1;  // we write requests
        int out = -1; // we read replies
        int err = -1; // its stderr, non-blocking
        std::string errTail;
        worker::DeviceInfo info;
        bool alive = false;
        std::set<std::string> hasReference; // the reference groups whose reference it holds
        bool referenceFailed = false;       // re-running a reference failed here: this worker does not verify
        bool checked = false;               // a config ran guarded here (GuardPolicy::Reference without verification)
        bool ownGroup = false;              // started in a process group of its own (compute-sanitizer, ssh)
        bool adopted = false;               // a warm worker from a script's depot (not our child)
        std::vector<worker::BufferExtent> buffers; // where its argument buffers are, from its answer to open
        // The job in flight.
        bool busy = false;
        std::uint64_t job = 0; // an item index, or kReferenceJob
        bool candidate = false;
        std::string group; // the reference group of the job in flight
        Clock::time_point deadline;
    };

    CudaBackendOptions options;
    const TuningProblem* problem = nullptr;
    std::size_t shape = 0;
    std::vector<std::size_t> outputArguments; // with options.outputsDir: the arguments whose contents come back
    std::vector<Worker> workers;
    int restarts = 0;
    std::set<std::string> notesSaid;

    // A group's first config whose output was correct (the first whose outputs were whole, when
    // not verifying), as each arch's devices run it.
    struct Reference {
        Config config;
        struct Code {
            std::string arch;
            std::vector<char> cubin;
            std::string entryName;
            std::optional<LaunchMetadata> launch;
        };
        std::vector<Code> code; // one per arch the session compiled for, its first arch first

        const Code& codeFor(const std::string& arch) const {
            for (const Code& c : code) {
                if (c.arch == arch)
                    return c;
            }
            return code.front();
        }
    };
    std::map<std::string, Reference> references; // by reference group ("" when there is one for all)
    std::uint64_t seed = 0;                      // the Random fills' seed the workers' buffers hold now
    std::vector<std::size_t> groupBy;            // the parameters a reference group is the values of
    std::vector<std::size_t> problemGroupBy;     // those of the problem (Tilescope.VerifyWithin)

    // The reference group of `config`: "" for one reference for all, else "P=4,Q=2".
    std::string groupOf(const Config& config) const {
        std::string key;
        for (const std::size_t p : groupBy) {
            if (p >= config.size() || p >= problem->parameters.size())
                continue;
            const expr::Value& v = problem->parameters[p].values.at(config[p]);
            key += (key.empty() ? "" : ",") + problem->parameters[p].name + "=" +
                   (v.kind == expr::Kind::Str ? *v.s : expr::repr(v));
        }
        return key;
    }
    std::filesystem::path sanitizer; // compute-sanitizer, with options.sanitize
    bool sanitizeDone = false;       // the one run under compute-sanitizer is over (or was given up)

    void note(const std::string& text) {
        if (options.note && notesSaid.insert(text).second)
            options.note(text);
    }

    std::filesystem::path workerPath() const {
        return options.workerPath.empty() ? workerProgram() : options.workerPath;
    }

    void drainStderr(Worker& w) {
        if (w.err < 0)
            return;
        char buffer[4096];
        for (;;) {
            const ssize_t n = ::read(w.err, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            w.errTail.append(buffer, static_cast<std::size_t>(n));
            if (w.errTail.size() > kStderrTail)
                w.errTail.erase(0, w.errTail.size() - kStderrTail);
        }
    }

    // Reads the worker's stderr until it ends (the process has exited) or `ms` have passed.
    bool stderrEnds(Worker& w, int ms) {
        if (w.err < 0)
            return true;
        const auto until = Clock::now() + std::chrono::milliseconds(ms);
        char buffer[4096];
        for (;;) {
            const ssize_t n = ::read(w.err, buffer, sizeof buffer);
            if (n == 0)
                return true;
            if (n > 0) {
                w.errTail.append(buffer, static_cast<std::size_t>(n));
                if (w.errTail.size() > kStderrTail)
                    w.errTail.erase(0, w.errTail.size() - kStderrTail);
                continue;
            }
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return true;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
            if (left <= 0)
                return false;
            pollfd p{w.err, POLLIN, 0};
            ::poll(&p, 1, static_cast<int>(left));
        }
    }

    void closeFds(Worker& w) {
        for (int* fd : {&w.in, &w.out, &w.err}) {
            if (*fd >= 0)
                ::close(*fd);
            *fd = -1;
        }
    }

    // Waits for the process to end (killing it after `graceMs`) and says how it ended.
    std::string reap(Worker& w, int graceMs) {
        std::string how = "ended";
        if (w.pid > 0 && w.adopted) {
            // Not our child (the depot that started it reaps it): its end is the end of its stderr.
            if (!stderrEnds(w, graceMs)) {
                ::kill(w.pid, SIGKILL);
                stderrEnds(w, 5000);
            }
        } else if (w.pid > 0) {
            int status = 0;
            const auto until = Clock::now() + std::chrono::milliseconds(graceMs);
            pid_t got = 0;
            while ((got = ::waitpid(w.pid, &status, WNOHANG)) == 0 && Clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            if (got == 0) {
                // Under compute-sanitizer or ssh the worker is a child: the whole group goes.
                ::kill(w.ownGroup ? -w.pid : w.pid, SIGKILL);
                got = ::waitpid(w.pid, &status, 0);
            }
            if (got == w.pid)
                how = describeExit(status);
        }
        drainStderr(w);
        closeFds(w);
        w.pid = -1;
        w.alive = false;
        w.busy = false;
        w.hasReference.clear();
        return how;
    }

    // Starts the process, or adopts a warm one from the depot of the script that started this
    // one (local workers only); hello and open come later (so that several start at once).
    // `prefix`: a command the worker runs under (compute-sanitizer), in a process group of its
    // own and without CUPTI (whose profiler and the sanitizer's instrumentation do not share a
    // process).
    std::string spawn(Worker& w, const std::vector<std::string>& prefix = {}) {
        w.errTail.clear();
        const std::string device = std::to_string(w.device);
        const bool remote = !options.launcher.empty();
        WorkerProcess process;
        std::optional<WorkerProcess> warm;
        if (!remote && prefix.empty() && options.workerPath.empty())
            if (const char* depot = std::getenv(kWorkerDepotVariable); depot && *depot)
                warm = adoptWorker(depot, w.device);
        if (warm) {
            process = *warm;
        } else {
            WorkerLaunch launch;
            if (remote) {
                // Through the launcher (ssh): the worker speaks over its stdin and stdout, which
                // the launcher carries; what the far side prints on stderr comes back on ours.
                launch.argv = options.launcher;
                launch.argv.insert(launch.argv.end(), {options.remoteWorker, "--device", device, "--stdio"});
                launch.stdio = true;
            } else {
                launch.argv = prefix;
                launch.argv.insert(launch.argv.end(),
                                   {workerPath().string(), "--device", device, "--in", "3", "--out", "4"});
            }
            // A launcher (ssh) or a wrapper (compute-sanitizer) gets a process group of its own,
            // so that Ctrl-C in the terminal reaches the engine alone, which stops after the
            // results in hand; killed by the keystroke, it would take its worker's config down as
            // a crash. A worker started directly ignores SIGINT itself.
            launch.ownGroup = remote || !prefix.empty();
            if (!prefix.empty())
                launch.extraEnvironment = {"TILESCOPE_WORKER_NO_CUPTI=1"};
            if (std::string error = startWorkerProcess(launch, process); !error.empty())
                return error;
        }
        w.pid = process.pid;
        w.in = process.in;
        w.out = process.out;
        w.err = process.err;
        w.adopted = warm.has_value();
        w.alive = true;
        w.busy = false;
        w.hasReference.clear();
        w.referenceFailed = false;
        w.checked = false;
        w.ownGroup = !w.adopted && (remote || !prefix.empty());
        w.buffers.clear();
        return {};
    }

    // Reads one reply within `seconds`; "" and the frame, or why not.
    std::string readReply(Worker& w, worker::Frame& frame, double seconds, const char* what) {
        const worker::ReadStatus status = worker::readFrame(w.out, frame, static_cast<int>(seconds * 1000));
        if (status == worker::ReadStatus::Ok)
            return {};
        if (status == worker::ReadStatus::TimedOut) {
            const std::string how = reap(w, 0);
            return std::string("no ") + what + " from the worker within " + std::to_string(static_cast<int>(seconds)) +
                   " s (" + how + ")";
        }
        const std::string how = reap(w, 2000);
        const std::string words = lastWords(w.errTail);
        std::string hint;
        if (!options.launcher.empty() && how == "exited with code 127")
            hint = " (the far side has no " + options.remoteWorker + ": give its path there with --remote-worker)";
        return std::string("the worker ") + how + " before its " + what + (words.empty() ? "" : ": " + words) + hint;
    }

    // Hello + open for a spawned worker; "" or why it cannot be used. `guard`: its buffers start
    // guarded (its first config usually runs guarded).
    std::string greet(Worker& w, bool guard = true) {
        worker::Frame frame;
        if (std::string error = readReply(w, frame, options.startSeconds, "hello"); !error.empty())
            return error;
        worker::Hello hello;
        try {
            hello = worker::decodeHello(frame);
        } catch (const std::exception& e) {
            reap(w, 0);
            return e.what();
        }
        if (!hello.ok) {
            reap(w, 2000);
            return hello.error.empty() ? "the worker could not use the device" : hello.error;
        }
        w.info = hello.device;
        if (!w.info.cuptiNote.empty() && !options.metrics.empty())
            note("device " + std::to_string(w.device) + ": " + w.info.cuptiNote);

        return sendOpen(w, guard);
    }

    // Asks the worker to open the problem (its buffers filled for `seed`); "" or why not.
    std::string sendOpen(Worker& w, bool guard) {
        worker::Open open;
        open.problemText = problem->toJson();
        open.problemName = problem->fileName;
        open.baseDir = problem->baseDir.string();
        open.shape = shape;
        open.seed = seed;
        open.guard = guard && options.guard != GuardPolicy::Off;
        if (!worker::writeFrame(w.in, worker::encode(open))) {
            const std::string how = reap(w, 2000);
            return "the worker " + how + " before it could open the problem: " + lastWords(w.errTail);
        }
        return {};
    }

    std::string opened(Worker& w) {
        worker::Frame frame;
        if (std::string error = readReply(w, frame, options.startSeconds, "answer to open"); !error.empty())
            return error;
        try {
            worker::Opened answer = worker::decodeOpened(frame);
            if (!answer.ok) {
                reap(w, 2000);
                return answer.error;
            }
            if (!answer.note.empty())
                note("device " + std::to_string(w.device) + ": " + answer.note);
            w.buffers = std::move(answer.buffers);
        } catch (const std::exception& e) {
            reap(w, 0);
            return e.what();
        }
        return {};
    }

    std::string start(Worker& w) {
        if (std::string error = spawn(w); !error.empty())
            return error;
        if (std::string error = greet(w); !error.empty())
            return error;
        return opened(w);
    }

    // After a crash or a timeout: a fresh worker, its buffers rebuilt.
    void restart(Worker& w) {
        ++restarts;
        if (std::string error = start(w); !error.empty()) {
            w.alive = false;
            note("device " + std::to_string(w.device) + ": the worker could not be started again: " + error);
        }
    }

    double watchdogSeconds(const MeasureControl& control) const {
        if (options.watchdogSeconds > 0)
            return options.watchdogSeconds;
        if (control.perConfigSeconds > 0)
            return control.perConfigSeconds;
        const worker::TimingRule& t = options.timing;
        // Loading, verifying, warming up and sampling, with room for slow configs; a profiling
        // pass replays the kernel and saves and restores its buffers.
        return 10.0 + 4.0 * (t.maxSeconds + t.warmupSeconds) + (options.metrics.empty() ? 0.0 : 30.0);
    }

    // How config runs on `w` are guarded (GuardPolicy): a run that makes or repeats the reference
    // guarded first; without verification, the first config a worker runs.
    worker::Guard guardFor(Worker& w, bool makesReference) {
        switch (options.guard) {
        case GuardPolicy::Off:
            return worker::Guard::Off;
        case GuardPolicy::Every:
            return worker::Guard::Always;
        case GuardPolicy::Reference:
            break;
        }
        const bool verifying = options.verify && !w.referenceFailed;
        if (makesReference || (!verifying && !w.checked)) {
            w.checked = true;
            return worker::Guard::Check;
        }
        return worker::Guard::Off;
    }

    // Runs `item`'s config once in a worker of its own under compute-sanitizer's memcheck,
    // compiled with line information, on ordinary buffers (memcheck then knows each argument's
    // own allocation and its exact size; a guarded buffer's mapping is rounded up to a page).
    // The result to record for the config when memcheck reported an error; nullopt otherwise,
    // with a note that says what happened.
    std::optional<Measurement> sanitized(const MeasureItem& item, double watchdog) {
        sanitizeDone = true;
        const auto first = std::find_if(workers.begin(), workers.end(), [](const Worker& w) { return w.alive; });
        if (first == workers.end())
            return std::nullopt;
        const int device = first->device;
        CompileResult compiled;
        try {
            CompileRequest request = RequestBuilder(*problem).request(item.config, first->info.arch);
            const auto& o = request.options;
            if (std::find(o.begin(), o.end(), "--generate-line-info") == o.end() &&
                std::find(o.begin(), o.end(), "-lineinfo") == o.end())
                request.options.push_back("--generate-line-info");
            compiled = compileKernel(request);
        } catch (const std::exception& e) {
            compiled.message = e.what();
        }
        if (!compiled.ok()) {
            note("--sanitize: the first config did not compile with line information, so compute-sanitizer did "
                 "not run: " +
                 compiled.message);
            return std::nullopt;
        }
        std::error_code ec;
        std::string logPattern = (std::filesystem::temp_directory_path(ec) / "tilescope-memcheck-XXXXXX").string();
        const int logFd = ::mkstemp(logPattern.data());
        if (logFd < 0) {
            note(std::string("--sanitize: cannot make a file for compute-sanitizer's log: ") + std::strerror(errno));
            return std::nullopt;
        }
        ::close(logFd);
        const std::filesystem::path log = logPattern;

        Worker s;
        s.device = device;
        std::string error = spawn(s, sanitizerCommand(sanitizer, log));
        if (error.empty())
            error = greet(s, false);
        if (error.empty())
            error = opened(s);
        std::optional<worker::Result> result;
        if (error.empty()) {
            worker::Measure m;
            m.id = kSanitizeJob;
            m.config = item.config;
            m.kernelName = compiled.entryName.empty() ? problem->kernelName : compiled.entryName;
            m.launch = compiled.launch;
            m.verify = false; // one launch is what memcheck needs
            oneSample(m.timing);
            m.guard = worker::Guard::Off;
            // Instrumented kernels run tens of times slower; a hang still ends within 10 minutes.
            const double seconds = std::clamp(20 * watchdog, 120.0, 600.0);
            worker::Frame frame;
            if (!worker::writeFrame(s.in, worker::encode(m, compiled.cubin)))
                error = "the worker under compute-sanitizer went away";
            else if (std::string why = readReply(s, frame, seconds, "result"); !why.empty())
                error = why;
            else {
                try {
                    result = worker::decodeResult(frame);
                } catch (const std::exception& e) {
                    error = e.what();
                }
            }
        }
        if (s.alive) {
            worker::writeFrame(s.in, worker::encodeShutdown());
            ::close(s.in); // the worker ends when its requests end, should compute-sanitizer go first
            s.in = -1;
            reap(s, 30000);
        }
        std::string text;
        {
            std::ifstream in(log, std::ios::binary);
            text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }
        std::filesystem::remove(log, ec);
        const std::optional<SanitizerReport> report = firstSanitizerReport(text);
        if (!report) {
            if (!error.empty())
                note("--sanitize: compute-sanitizer could not run the first config: " + error);
            else if (result && result->measurement.status == ResultStatus::Crashed)
                note("--sanitize: the first config crashed under compute-sanitizer, which reported nothing: " +
                     result->measurement.message);
            else
                note("--sanitize: compute-sanitizer (memcheck) found no memory error in the first config");
            return std::nullopt;
        }
        Measurement out = failed(ResultStatus::Crashed, sanitizerMessage(*report, s.buffers), device);
        return out;
    }

    // A config's returned contents, one file per argument under outputsDir/<Kernel Tuner's key>/.
    void writeOutputs(const Config& config, const std::vector<worker::ArgumentContents>& outputs) {
        std::string key;
        for (std::size_t p = 0; p < config.size() && p < problem->parameters.size(); ++p) {
            const expr::Value& v = problem->parameters[p].values.at(config[p]);
            key += (p ? "," : "") + (v.kind == expr::Kind::Str ? *v.s : expr::repr(v)); // Python's str()
        }
        const std::filesystem::path dir = options.outputsDir / key;
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        for (const worker::ArgumentContents& o : outputs) {
            const std::filesystem::path file = dir / (std::to_string(o.argument) + ".bin");
            std::ofstream out(file, std::ios::binary | std::ios::trunc);
            out.write(o.bytes.data(), static_cast<std::streamsize>(o.bytes.size()));
            if (!out.flush())
                note("cannot write " + file.string() + ": the outputs of this config are not kept");
        }
    }

    // One timed launch after the first, no warm-up time: a run for its outputs or its counters.
    static void oneSample(worker::TimingRule& t) {
        t.minSamples = t.maxSamples = 1;
        t.warmupSeconds = 0;
        t.maxSeconds = 0;
    }

    bool send(Worker& w, std::uint64_t job, const Config& config, const std::vector<char>& cubin,
              const std::string& entryName, const std::optional<LaunchMetadata>& launch, bool makeReference,
              const std::string& group, double watchdog, const MeasureControl* control = nullptr) {
        worker::Measure m;
        m.id = job;
        m.config = config;
        m.kernelName = entryName.empty() ? problem->kernelName : entryName;
        m.launch = launch;
        m.verify = options.verify && !w.referenceFailed;
        m.checkWrites = !w.referenceFailed;
        m.makeReference = makeReference;
        m.referenceGroup = group;
        m.guard = guardFor(w, makeReference);
        if (job == kReferenceJob) {
            // Only its output matters: one sample, no profiling.
            oneSample(m.timing);
        } else {
            m.timing = options.timing;
            m.metrics = options.metrics;
            m.returnArguments = outputArguments;
            m.executedCounts = options.executedCounts;
            if (control) {
                m.timing.slowerThanMs = control->slowerThanMs;
                m.timing.profileUnderMs = control->profileUnderMs;
                m.timing.keepSamples = control->keepSamples;
                if (control->countersOnly) {
                    // The counters of a config that ranked: one sample, kept by no one.
                    oneSample(m.timing);
                    m.timing.targetRelStdev = 0;
                    m.timing.slowerThanMs = 0;
                    m.timing.profileUnderMs = 0;
                    m.timing.keepSamples = false;
                    m.metrics = cuptiMetricNames(m.metrics); // not the energy's loop
                    m.returnArguments.clear();
                } else if (control->samplesPerConfig > 0) {
                    // A round of a final comparison: that many samples (fewer only past the
                    // time cap), timing alone.
                    m.timing.minSamples = m.timing.maxSamples = control->samplesPerConfig;
                    m.timing.targetRelStdev = 0;
                    m.timing.slowerThanMs = 0;
                    m.timing.profileUnderMs = 0;
                    m.metrics.clear();
                    m.executedCounts = false;
                }
            }
        }
        // Set first: when the write fails, the job is the one lost.
        w.busy = true;
        w.job = job;
        w.candidate = makeReference && job != kReferenceJob;
        w.group = group;
        w.deadline = Clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(watchdog * 1000));
        return worker::writeFrame(w.in, worker::encode(m, cubin));
    }
};

CudaBackend::CudaBackend(CudaBackendOptions options)
    : m_impl(std::make_unique<Impl>()) {
    m_impl->options = std::move(options);
    if (m_impl->options.devices.empty())
        m_impl->options.devices = {0};
}

CudaBackend::~CudaBackend() {
    close();
}

std::filesystem::path CudaBackend::resolvedWorkerPath() const {
    return m_impl->workerPath();
}

BackendInfo CudaBackend::open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace&) {
    Impl& d = *m_impl;
    close();
    ignoreSigpipe();
    d.problem = &problem;
    d.shape = shapeIndex;
    d.references.clear();
    d.seed = d.options.seed;
    d.problemGroupBy.clear();
    for (const std::string& name : problem.verifyWithin)
        if (const int p = problem.parameterIndex(name); p >= 0)
            d.problemGroupBy.push_back(static_cast<std::size_t>(p));
    d.groupBy = d.problemGroupBy;
    d.outputArguments.clear();
    if (!d.options.outputsDir.empty()) {
        const auto& args = problem.arguments;
        const bool flagged =
            std::any_of(args.begin(), args.end(), [](const KernelArgument& a) { return a.output.value_or(false); });
        for (std::size_t i = 0; i < args.size(); ++i)
            if (args[i].memoryType == "Vector" && (!flagged || args[i].output.value_or(false)))
                d.outputArguments.push_back(i);
    }

    d.sanitizeDone = false;
    if (d.options.sanitize) {
        if (!d.options.launcher.empty())
            throw InputError({}, "--sanitize",
                             "--sanitize runs compute-sanitizer on this machine's GPUs: not through ssh:// or "
                             "--launcher");
        std::string why;
        d.sanitizer = findComputeSanitizer(&why);
        if (d.sanitizer.empty())
            throw InputError({}, "--sanitize", why);
    }

    const std::filesystem::path path = d.workerPath();
    if (d.options.launcher.empty() && !std::filesystem::exists(path))
        throw InputError({}, {},
                         "the GPU worker " + path.string() + " does not exist (set TILESCOPE_WORKER to its path)");

    d.workers.clear();
    for (int device : d.options.devices) {
        Impl::Worker w;
        w.device = device;
        d.workers.push_back(std::move(w));
    }
    std::vector<std::string> errors(d.workers.size());
    for (std::size_t i = 0; i < d.workers.size(); ++i)
        errors[i] = d.spawn(d.workers[i]);
    for (std::size_t i = 0; i < d.workers.size(); ++i) {
        if (errors[i].empty())
            errors[i] = d.greet(d.workers[i]);
    }
    for (std::size_t i = 0; i < d.workers.size(); ++i) {
        if (errors[i].empty())
            errors[i] = d.opened(d.workers[i]);
    }

    std::string why;
    std::vector<Impl::Worker> usable;
    for (std::size_t i = 0; i < d.workers.size(); ++i) {
        if (errors[i].empty()) {
            usable.push_back(std::move(d.workers[i]));
            continue;
        }
        const std::string line = "device " + std::to_string(d.workers[i].device) + ": " + errors[i];
        why += (why.empty() ? "" : "; ") + line;
    }
    d.workers = std::move(usable);
    if (d.workers.empty()) {
        const bool remote = !d.options.launcher.empty();
        std::string message =
            std::string(remote ? "cannot measure on the GPU of the far side" : "cannot measure on the GPU") + ": " +
            why;
        if (why.find("no NVIDIA driver") != std::string::npos)
            message += remote ? ". The machine the workers were started on has no NVIDIA driver: is it the GPU server?"
                              : ". Without a GPU, replay a recording (--backend replay:FILE) or analyse offline "
                                "(tilescope-cli analyze)";
        throw InputError(problem.fileName, {}, message);
    }
    if (!why.empty())
        d.note("devices left out: " + why);

    const worker::DeviceInfo& first = d.workers.front().info;
    BackendInfo info;
    info.kind = "cuda";
    info.deviceName = first.name;
    info.arch = first.arch;
    for (const Impl::Worker& w : d.workers) {
        if (std::find(info.archs.begin(), info.archs.end(), w.info.arch) == info.archs.end())
            info.archs.push_back(w.info.arch);
    }
    if (const ArchLimits* limits = findArch(first.arch))
        info.limits = *limits;
    std::string list;
    nlohmann::json devices = nlohmann::json::array();
    for (const Impl::Worker& w : d.workers) {
        list += (list.empty() ? "" : ", ") + std::to_string(w.device);
        devices.push_back(nlohmann::json::parse(worker::provenanceJson(w.info)));
        if (w.info.arch != first.arch)
            d.note("device " + std::to_string(w.device) + " is " + w.info.arch + ", device " +
                   std::to_string(d.workers.front().device) + " is " + first.arch +
                   ": each config is compiled for both, and each result is timed on the device it names");
    }
    info.description =
        "CUDA on " + first.name + " (" + first.arch + (d.workers.size() > 1 ? ", devices " : ", device ") + list + ")";
    const worker::TimingRule& t = d.options.timing;
    nlohmann::json provenance{
        {"devices", devices},
        {"timing",
         {{"min_samples", t.minSamples},
          {"max_samples", t.maxSamples},
          {"target_rel_stdev", t.targetRelStdev},
          {"max_seconds", t.maxSeconds},
          {"flush_l2", t.flushL2},
          {"context", l2ContextName(t)}}},
        {"verify", d.options.verify},
        {"guard", guardPolicyName(d.options.guard)},
        {"sanitize", d.options.sanitize},
        {"metrics", d.options.metrics},
        {"seed", d.options.seed},
        {"tool_version", TILESCOPE_VERSION},
    };
    info.provenanceJson = provenance.dump();
    info.needsCubins = true;
    info.simulated = false;
    info.preferredBatch = 2 * d.workers.size();
    return info;
}

void CudaBackend::measure(std::span<const MeasureItem> items, const MeasureControl& control, const MeasureSink& sink) {
    Impl& d = *m_impl;
    MeasureItems all(items, control);
    std::deque<std::size_t> pending;
    for (std::size_t i = 0; i < items.size(); ++i)
        pending.push_back(i);
    auto report = [&](std::size_t index, Measurement m) {
        sink(index, std::move(m));
        all.forget(index);
    };
    const double watchdog = d.watchdogSeconds(control);

    auto stopReason = [&]() -> const char* {
        if (control.cancel && control.cancel->load())
            return "cancelled";
        if (control.deadline && Clock::now() >= *control.deadline)
            return "the run's time cap was reached";
        return nullptr;
    };
    auto anyBusy = [&] {
        return std::any_of(d.workers.begin(), d.workers.end(), [](const Impl::Worker& w) { return w.busy; });
    };
    auto anyAlive = [&] {
        return std::any_of(d.workers.begin(), d.workers.end(), [](const Impl::Worker& w) { return w.alive; });
    };
    auto idleWorkers = [&] {
        return static_cast<std::size_t>(std::count_if(d.workers.begin(), d.workers.end(),
                                                      [](const Impl::Worker& w) { return w.alive && !w.busy; }));
    };
    auto candidateInFlight = [&](const std::string& group) {
        return std::any_of(d.workers.begin(), d.workers.end(),
                           [&](const Impl::Worker& w) { return w.busy && w.candidate && w.group == group; });
    };
    // The parameters a reference group is the values of: the call's (a verification within the
    // groups of a parameter whose values split the outputs), else the problem's.
    d.groupBy = control.verifyWithin.empty() ? d.problemGroupBy : control.verifyWithin;

    // A worker's job ended without a result: crashed or timed out.
    auto lost = [&](Impl::Worker& w, ResultStatus status, const std::string& why) {
        const std::uint64_t job = w.job;
        w.busy = false;
        w.candidate = false;
        if (job == kReferenceJob) {
            // The reference itself failed on a fresh worker: it measures without verifying.
            d.note("device " + std::to_string(w.device) + ": re-running the reference config failed (" + why +
                   "); its results are not verified");
            d.restart(w);
            w.referenceFailed = true;
            return;
        }
        report(static_cast<std::size_t>(job), failed(status, why, w.device));
        d.restart(w);
    };

    for (;;) {
        // Once the configs at hand are handed out, idle workers take what the feed has ready.
        if (pending.empty() && !stopReason())
            for (const std::size_t index : all.more(idleWorkers()))
                pending.push_back(index);
        if (pending.empty() && !anyBusy())
            break;
        // Dispatch to idle workers.
        for (Impl::Worker& w : d.workers) {
            if (!w.alive || w.busy)
                continue;
            if (const char* reason = stopReason()) {
                while (!pending.empty()) {
                    report(pending.front(), failed(ResultStatus::Skipped, reason));
                    pending.pop_front();
                }
                break;
            }
            if (pending.empty())
                continue;
            // Verifying or checking which elements the outputs' writes reach, each config is compared
            // with its group's reference, which a fresh worker first runs again.
            const bool checking = !w.referenceFailed;
            const std::string group = d.groupOf(all[pending.front()].config);
            const auto reference = d.references.find(group);
            if (checking && reference != d.references.end() && !w.hasReference.count(group)) {
                const Impl::Reference::Code& code = reference->second.codeFor(w.info.arch);
                if (!d.send(w, kReferenceJob, reference->second.config, code.cubin, code.entryName, code.launch, true,
                            group, watchdog))
                    lost(w, ResultStatus::Crashed, "the worker " + d.reap(w, 2000) + ": " + lastWords(w.errTail));
                continue;
            }
            const bool makeReference = checking && reference == d.references.end();
            if (makeReference && candidateInFlight(group))
                continue; // the first correct output decides the reference; wait for it
            const std::size_t index = pending.front();
            pending.pop_front();
            const MeasureItem& item = all[index];
            const CompileResult* compiled = item.compiledFor(w.info.arch);
            if (!compiled || compiled->cubin.empty()) {
                report(index, failed(ResultStatus::LaunchError, "no cubin to run (the config did not compile)"));
                continue;
            }
            if (d.options.sanitize && !d.sanitizeDone) {
                // The first config measured (with verification, the reference run) goes through
                // compute-sanitizer once; its report, if any, is the config's result.
                if (std::optional<Measurement> sanitizerReport = d.sanitized(item, watchdog)) {
                    report(index, std::move(*sanitizerReport));
                    continue;
                }
            }
            if (!d.send(w, index, item.config, compiled->cubin, compiled->entryName, compiled->launch, makeReference,
                        group, watchdog, &control)) {
                lost(w, ResultStatus::Crashed,
                     "the worker " + d.reap(w, 2000) + " before the config was sent: " + lastWords(w.errTail));
            }
        }
        if (!anyAlive()) {
            while (!pending.empty()) {
                report(pending.front(), failed(ResultStatus::Skipped, "no GPU worker is left running"));
                pending.pop_front();
            }
            break;
        }
        if (!anyBusy())
            continue;

        // Wait for a reply, a death or a watchdog.
        std::vector<pollfd> fds;
        std::vector<std::pair<std::size_t, bool>> owners; // worker, is its stderr
        Clock::time_point nearest = Clock::time_point::max();
        for (std::size_t i = 0; i < d.workers.size(); ++i) {
            Impl::Worker& w = d.workers[i];
            if (!w.alive)
                continue;
            if (w.busy) {
                fds.push_back(pollfd{w.out, POLLIN, 0});
                owners.emplace_back(i, false);
                nearest = std::min(nearest, w.deadline);
            }
            if (w.err >= 0) {
                fds.push_back(pollfd{w.err, POLLIN, 0});
                owners.emplace_back(i, true);
            }
        }
        // Wake at least every 100 ms to notice a cancel, every millisecond while a worker is idle
        // and the feed may have a config ready for it.
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(nearest - Clock::now()).count();
        const bool feedable = control.feed && pending.empty() && idleWorkers() > 0;
        const int timeout = static_cast<int>(std::clamp<std::int64_t>(wait, 0, feedable ? 1 : 100));
        const int ready = ::poll(fds.data(), fds.size(), timeout);
        if (ready < 0 && errno != EINTR)
            throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));

        for (std::size_t k = 0; ready > 0 && k < fds.size(); ++k) {
            if (fds[k].revents == 0)
                continue;
            Impl::Worker& w = d.workers[owners[k].first];
            if (owners[k].second) {
                d.drainStderr(w);
                continue;
            }
            if (!w.busy || !w.alive)
                continue;
            worker::Frame frame;
            // The frame has begun (or the pipe closed): it completes quickly or not at all.
            const worker::ReadStatus status = worker::readFrame(w.out, frame, 30000);
            if (status != worker::ReadStatus::Ok) {
                const std::string how = d.reap(w, 2000);
                const std::string words = lastWords(w.errTail);
                w.busy = true; // for lost()
                lost(w, ResultStatus::Crashed,
                     "the worker " + how + " while measuring it" + (words.empty() ? "" : ": " + words));
                continue;
            }
            worker::Result result;
            try {
                result = worker::decodeResult(frame);
            } catch (const std::exception& e) {
                d.reap(w, 0);
                w.busy = true;
                lost(w, ResultStatus::Crashed, std::string("the worker sent a bad reply: ") + e.what());
                continue;
            }
            w.busy = false;
            if (!result.metricsNote.empty())
                d.note("device " + std::to_string(w.device) + ": " + result.metricsNote);
            if (!result.executedNote.empty())
                d.note("device " + std::to_string(w.device) + ": " + result.executedNote);
            const bool ok = result.measurement.status == ResultStatus::Ok;
            if (w.job == kReferenceJob) {
                if (ok)
                    w.hasReference.insert(w.group);
                else {
                    w.referenceFailed = true;
                    d.note("device " + std::to_string(w.device) + ": re-running the reference config failed (" +
                           result.measurement.message + "); its results are not verified");
                }
            } else {
                const std::size_t index = static_cast<std::size_t>(w.job);
                if (w.candidate && ok) {
                    Impl::Reference reference{all[index].config, {}};
                    for (const ArchCompile& c : all[index].compiles) {
                        if (c.result)
                            reference.code.push_back({c.arch, c.result->cubin, c.result->entryName, c.result->launch});
                    }
                    d.references[w.group] = std::move(reference);
                    w.hasReference.insert(w.group);
                }
                if (result.function && !result.measurement.staticInfo) {
                    StaticInfo info;
                    info.registers = result.function->registers;
                    info.stackFrame = result.function->localBytes;
                    info.sharedStatic = result.function->sharedStatic;
                    result.measurement.staticInfo = info;
                }
                if (result.measurement.device < 0)
                    result.measurement.device = w.device;
                if (!result.outputs.empty())
                    d.writeOutputs(all[index].config, result.outputs);
                report(index, std::move(result.measurement));
            }
            w.candidate = false;
            if (result.fatal) {
                // The context is lost; the worker exits by itself.
                d.reap(w, 5000);
                d.restart(w);
            }
        }

        // The watchdog.
        const auto now = Clock::now();
        for (Impl::Worker& w : d.workers) {
            if (w.alive && w.busy && now >= w.deadline) {
                ::kill(w.pid, SIGKILL);
                d.reap(w, 5000);
                w.busy = true;
                char seconds[32];
                std::snprintf(seconds, sizeof seconds, "%.1f", watchdog);
                lost(w, ResultStatus::Timeout,
                     std::string("no result within ") + seconds + " s: the worker was stopped (a hang?)");
            }
        }
    }
}

bool CudaBackend::reseed(std::uint64_t seed) {
    Impl& d = *m_impl;
    if (!d.problem || seed == d.seed)
        return false;
    const bool random = std::any_of(d.problem->arguments.begin(), d.problem->arguments.end(),
                                    [](const KernelArgument& a) { return a.fillType == "Random"; });
    if (!random)
        return false;
    d.seed = seed;
    for (Impl::Worker& w : d.workers) {
        if (!w.alive || w.busy)
            continue;
        std::string error = d.sendOpen(w, d.options.guard != GuardPolicy::Off);
        if (error.empty())
            error = d.opened(w);
        if (!error.empty()) {
            d.note("device " + std::to_string(w.device) + ": cannot fill the inputs again for seed " +
                   std::to_string(seed) + ": " + error);
            d.restart(w);
        }
        // Each reference is run again on the new inputs before the configs compared with it.
        w.hasReference.clear();
    }
    return true;
}

void CudaBackend::close() {
    Impl& d = *m_impl;
    for (Impl::Worker& w : d.workers) {
        if (!w.alive)
            continue;
        if (!w.busy)
            worker::writeFrame(w.in, worker::encodeShutdown());
        else
            ::kill(w.pid, SIGKILL);
        d.reap(w, 5000);
    }
    d.workers.clear();
}

std::vector<worker::DeviceInfo> CudaBackend::devices() const {
    std::vector<worker::DeviceInfo> out;
    for (const Impl::Worker& w : m_impl->workers)
        out.push_back(w.info);
    return out;
}

int CudaBackend::restarts() const {
    return m_impl->restarts;
}

} // namespace tilescope
