#pragma once

// Everything a tilescope-worker does with its GPU, behind the three requests of the worker
// protocol: start (the device and its context), open (a problem's buffers) and measure (one
// config: load its cubin, launch, verify, time, profile). The process around it only moves
// frames (app/worker/main.cpp).
//
// One thread: the context is current on the thread that called start(), and every later call
// must come from that thread.

#include "measure/cuda/workerprotocol.h"

#include <memory>
#include <vector>

namespace tilescope::cuda {

class WorkerRuntime {
public:
    WorkerRuntime();
    ~WorkerRuntime();
    WorkerRuntime(const WorkerRuntime&) = delete;
    WorkerRuntime& operator=(const WorkerRuntime&) = delete;

    /// Loads the driver, initialises it, retains device `deviceOrdinal`'s primary context and
    /// makes it current, creates a stream and events, and sets CUPTI up when it can (why not goes
    /// to DeviceInfo::cuptiNote). Hello::ok is false, with the reason, when there is no driver
    /// ("no NVIDIA driver: ..."), no such device, or the context cannot be made.
    worker::Hello start(int deviceOrdinal);

    /// Parses the problem, plans its arguments for the shape, and allocates and fills the device
    /// buffers (and a pristine copy of every ReadWrite buffer, an L2 flush buffer, the problem's
    /// reference data). Frees everything of a previous open first, the kept reference included.
    worker::Opened open(const worker::Open& request);

    /// Measures one config with `cubin`; see the method in resources/docs/guide/measuring.md. Never throws.
    /// Result::fatal is set when the context is lost (a sticky error): the process must exit after sending it.
    worker::Result measure(const worker::Measure& request, const std::vector<char>& cubin);

    /// Frees the problem's buffers, the stream, the events and CUPTI, and releases the primary
    /// context. Safe to call twice; the destructor calls it.
    void release();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace tilescope::cuda
