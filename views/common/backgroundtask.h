#pragma once

// The one way the views run work off the GUI thread. A BackgroundTask is one kind of work of one
// QObject (the heatmap's aggregation, a recording being read, the cross-GPU compiles, ...):
//
//   - start() runs a job on the task's own thread pool and supersedes the job before it: that
//     job's cancel flag is set, and nothing it delivers arrives any more (a job superseded before
//     it began does not run at all);
//   - results are delivered on the receiver's thread (the GUI thread), and not at all once the
//     receiver has been destroyed;
//   - the destructor (or stop()) supersedes the job in flight and waits for it, so no job
//     outlives what it reads.
//
//     BackgroundTask m_aggregation{this};
//     m_aggregation.start([results]() { return aggregate(*results); },       // on the pool
//                         [this](Grid grid) { show(std::move(grid)); });     // on the GUI thread
//
// A job that delivers in stages or reports progress takes the BackgroundJob and posts by itself.
// A job reads copies or immutable shared data only: the GUI thread moves on while it runs.

#include <QObject>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace tilescope::views {

class BackgroundTask;

/// A running job's view of its task: whether it should stop, and a way back to the GUI thread.
class BackgroundJob {
public:
    /// A newer job of the same task started, or the task was stopped or superseded: nothing this
    /// job posts is delivered any more, so it may as well stop.
    bool isSuperseded() const;
    /// The job should stop soon: superseded, or BackgroundTask::cancel() asked it to (its posts
    /// are then still delivered, so that it can report what it did).
    bool isCancelled() const { return m_cancel->load(); }
    /// The flag behind isCancelled(), for core calls that poll one (SpaceLimits::cancel, ...).
    const std::atomic<bool>* cancelFlag() const { return m_cancel.get(); }
    /// Runs `function` on the receiver's thread, unless by then this job is superseded or the
    /// receiver is gone. Posts of one job arrive in the order they were made.
    void post(std::function<void()> function) const;

private:
    friend class BackgroundTask;
    struct State;
    BackgroundJob(State* state, std::uint64_t generation, std::shared_ptr<std::atomic<bool>> cancel);

    State* m_state; // the task's; it waits for its jobs before it goes
    std::uint64_t m_generation;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

class BackgroundTask {
public:
    /// Jobs deliver to `receiver`'s thread; at most `maxThreads` of them run at once (a
    /// superseded job still running keeps its thread until it returns).
    explicit BackgroundTask(QObject* receiver, int maxThreads = 1);
    /// stop().
    ~BackgroundTask();
    BackgroundTask(const BackgroundTask&) = delete;
    BackgroundTask& operator=(const BackgroundTask&) = delete;

    /// Runs `work` on the pool, superseding the job before it. `work` takes a const
    /// BackgroundJob& or nothing and returns a value or void; `deliver` gets the value (or
    /// nothing) on the receiver's thread if the job is still the newest when it arrives.
    template <class Work, class Deliver>
    void start(Work work, Deliver deliver);
    /// Runs `work(const BackgroundJob&)` on the pool, superseding the job before it; it delivers
    /// through BackgroundJob::post() by itself (stages, progress), or not at all (`work()`).
    template <class Work>
    void start(Work work);

    /// Supersedes the job in flight without starting another: its cancel flag is set and nothing
    /// it posts is delivered.
    void supersede();
    /// Asks the job in flight to stop (its cancel flag) but keeps its deliveries.
    void cancel();
    /// The newest job was asked to stop (cancel() or supersede()).
    bool isCancelled() const;
    /// Supersedes the job in flight, drops the queued ones and waits for the running ones. The
    /// destructor calls it; a receiver whose jobs read its members calls it first thing in its
    /// own destructor.
    void stop();

private:
    BackgroundJob next();
    void run(std::function<void()> runnable);

    std::unique_ptr<BackgroundJob::State> m_state;
};

template <class Work>
void BackgroundTask::start(Work work) {
    const BackgroundJob job = next();
    run([job, work = std::move(work)]() mutable {
        if (job.isSuperseded())
            return; // a newer job started before this one did
        if constexpr (std::is_invocable_v<Work&, const BackgroundJob&>)
            work(job);
        else
            work();
    });
}

template <class Work, class Deliver>
void BackgroundTask::start(Work work, Deliver deliver) {
    start([work = std::move(work), deliver = std::move(deliver)](const BackgroundJob& job) mutable {
        const auto call = [&]() -> decltype(auto) {
            if constexpr (std::is_invocable_v<Work&, const BackgroundJob&>)
                return work(job);
            else
                return work();
        };
        using Result = std::decay_t<decltype(call())>;
        if constexpr (std::is_void_v<Result>) {
            call();
            job.post(deliver);
        } else {
            auto result = std::make_shared<Result>(call());
            job.post([deliver, result]() mutable { deliver(std::move(*result)); });
        }
    });
}

} // namespace tilescope::views
