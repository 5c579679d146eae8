#include "common/backgroundtask.h"

#include <QPointer>
#include <QThread>
#include <QThreadPool>

#include <algorithm>

namespace tilescope::views {

struct BackgroundJob::State {
    QPointer<QObject> receiver;
    QObject context; // on the receiver's thread: the posts go through it, and die with it
    QThreadPool pool;
    std::atomic<std::uint64_t> generation{0};
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false); // the newest job's
};

BackgroundJob::BackgroundJob(State* state, std::uint64_t generation, std::shared_ptr<std::atomic<bool>> cancel)
    : m_state(state)
    , m_generation(generation)
    , m_cancel(std::move(cancel)) {}

bool BackgroundJob::isSuperseded() const {
    return m_state->generation.load() != m_generation;
}

void BackgroundJob::post(std::function<void()> function) const {
    // Through the task's own context object, not the receiver: the task outlives its jobs, so the
    // object posted to is alive, whereas the receiver may be gone by now. Events still queued
    // when the task goes are discarded with the context.
    State* state = m_state;
    const std::uint64_t generation = m_generation;
    QMetaObject::invokeMethod(
        &state->context,
        [state, generation, function = std::move(function)]() {
            if (state->generation.load() != generation || !state->receiver)
                return;
            function();
        },
        Qt::QueuedConnection);
}

BackgroundTask::BackgroundTask(QObject* receiver, int maxThreads)
    : m_state(std::make_unique<BackgroundJob::State>()) {
    m_state->receiver = receiver;
    if (receiver && receiver->thread() != m_state->context.thread())
        m_state->context.moveToThread(receiver->thread());
    m_state->pool.setMaxThreadCount(std::max(1, maxThreads));
}

BackgroundTask::~BackgroundTask() {
    stop();
}

BackgroundJob BackgroundTask::next() {
    supersede();
    m_state->cancel = std::make_shared<std::atomic<bool>>(false);
    return BackgroundJob(m_state.get(), m_state->generation.load(), m_state->cancel);
}

void BackgroundTask::run(std::function<void()> runnable) {
    m_state->pool.start(std::move(runnable));
}

void BackgroundTask::supersede() {
    m_state->cancel->store(true);
    ++m_state->generation;
}

void BackgroundTask::cancel() {
    m_state->cancel->store(true);
}

bool BackgroundTask::isCancelled() const {
    return m_state->cancel->load();
}

void BackgroundTask::stop() {
    supersede();
    m_state->pool.clear();
    m_state->pool.waitForDone();
}

} // namespace tilescope::views
