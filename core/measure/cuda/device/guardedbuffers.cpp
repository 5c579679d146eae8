// Guarded buffers: argument buffers made with CUDA's virtual memory management so that each ends
// exactly where unmapped address space begins. A kernel that reads or writes past a buffer's end
// then faults every time (CUDA_ERROR_ILLEGAL_ADDRESS), where an ordinary allocation would let it
// read a neighbour's data or the allocator's rounding and go on silently. The layout's arithmetic
// is measure/cuda/memorycheck.h's, tested without a GPU.

#include "measure/cuda/device/runtimeimpl.h"
#include "measure/cuda/memorycheck.h"

namespace tilescope::cuda {

namespace {

CUmemAllocationProp deviceMemory(CUdevice device) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = static_cast<int>(device);
    return prop;
}

} // namespace

void WorkerRuntime::Impl::probeVirtualMemory() {
    vmm = attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0) != 0;
    granularity = 0;
    if (vmm) {
        const CUmemAllocationProp prop = deviceMemory(device);
        std::size_t g = 0;
        if (cu->cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS && g > 0)
            granularity = g;
        else
            vmm = false;
    }
    if (!vmm)
        guardNote = "guarded buffers need CUDA's virtual memory management, which device " + std::to_string(ordinal) +
                    " does not support: its buffers are ordinary allocations, where a read or write past a "
                    "buffer's end may go unnoticed";
}

CUdeviceptr WorkerRuntime::Impl::allocateGuarded(std::int64_t bytes, Reservation& reservation) {
    reservation = {};
    if (!vmm)
        return 0;
    // The buffer starts `offset` bytes into the mapped memory, aligned to 256 bytes as cuMemAlloc
    // aligns, so that its end meets the guard. The alignment leaves up to 255 bytes of slack
    // between the end and the guard: an overrun smaller than that reads mapped memory and is not
    // caught (a 1-element float buffer faults from its element 64 on).
    const GuardedLayout layout = guardedLayout(static_cast<std::uint64_t>(bytes), granularity);
    const CUmemAllocationProp prop = deviceMemory(device);
    auto failed = [&](CUresult rc, const char* call) -> CUdeviceptr {
        if (isStickyError(rc))
            throw CudaFailure{rc, std::string("cannot make a guarded buffer (") + call + ")"};
        if (guardNote.empty())
            guardNote = std::string("a guarded buffer could not be made (") + call + ": " + cu->describe(rc) +
                        "): ordinary allocations stand in, where a read or write past a buffer's end may go unnoticed";
        return 0;
    };
    CUdeviceptr base = 0;
    if (const CUresult rc = cu->cuMemAddressReserve(&base, layout.reserved, 0, 0, 0); rc != CUDA_SUCCESS)
        return failed(rc, "cuMemAddressReserve");
    CUmemGenericAllocationHandle handle = 0;
    if (const CUresult rc = cu->cuMemCreate(&handle, layout.mapped, &prop, 0); rc != CUDA_SUCCESS) {
        cu->cuMemAddressFree(base, layout.reserved);
        return failed(rc, "cuMemCreate");
    }
    const CUresult mapped = cu->cuMemMap(base, layout.mapped, 0, handle, 0);
    // The mapping holds the memory from here on; unmapping frees it.
    cu->cuMemRelease(handle);
    if (mapped != CUDA_SUCCESS) {
        cu->cuMemAddressFree(base, layout.reserved);
        return failed(mapped, "cuMemMap");
    }
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    // Only the mapped part is made accessible: the guard after it stays unmapped.
    if (const CUresult rc = cu->cuMemSetAccess(base, layout.mapped, &access, 1); rc != CUDA_SUCCESS) {
        cu->cuMemUnmap(base, layout.mapped);
        cu->cuMemAddressFree(base, layout.reserved);
        return failed(rc, "cuMemSetAccess");
    }
    reservation = {base, static_cast<std::size_t>(layout.reserved), static_cast<std::size_t>(layout.mapped)};
    return base + layout.offset;
}

void WorkerRuntime::Impl::freeArgument(std::size_t i) {
    if (i >= buffers.size())
        return;
    Reservation* r = i < reservations.size() ? &reservations[i] : nullptr;
    if (r && r->base != 0) {
        if (!lost) {
            cu->cuMemUnmap(r->base, r->mapped);
            cu->cuMemAddressFree(r->base, r->reserved);
        }
        *r = {};
        buffers[i] = 0;
        return;
    }
    freeBuffer(buffers[i]);
}

void WorkerRuntime::Impl::placeBuffers(bool guarded) {
    const auto& args = arguments();
    bool synced = false;
    bool moved = false;
    for (std::size_t i = 0; i < args.size() && i < buffers.size(); ++i) {
        if (!args[i].isVector() || buffers[i] == 0 || (reservations[i].base != 0) == guarded)
            continue;
        if (guarded && !vmm)
            return;
        if (!synced) {
            // The copies below run on the legacy stream: nothing of ours may still be in flight.
            check(cu->cuStreamSynchronize(stream), "the kernel failed");
            synced = true;
        }
        const std::size_t bytes = static_cast<std::size_t>(args[i].bytes());
        Reservation reservation;
        CUdeviceptr target = 0;
        if (guarded) {
            target = allocateGuarded(args[i].bytes(), reservation);
        } else if (const CUresult rc = cu->cuMemAlloc(&target, bytes); rc != CUDA_SUCCESS) {
            if (isStickyError(rc))
                throw CudaFailure{rc, "cannot allocate " + args[i].label()};
            target = 0; // out of memory: it stays guarded, which is slower to set up, not wrong
        }
        if (target == 0)
            continue;
        // A device-to-device cuMemcpyDtoD may return before the copy is done: the source is freed
        // only once the context has finished it (unmapping memory a copy still reads faults later,
        // in whichever launch comes next).
        CUresult copied = cu->cuMemcpyDtoD(target, buffers[i], bytes);
        if (copied == CUDA_SUCCESS)
            copied = cu->cuCtxSynchronize();
        if (const CUresult rc = copied; rc != CUDA_SUCCESS) {
            if (reservation.base != 0) {
                cu->cuMemUnmap(reservation.base, reservation.mapped);
                cu->cuMemAddressFree(reservation.base, reservation.reserved);
            } else {
                cu->cuMemFree(target);
            }
            check(rc, "cannot move " + args[i].label() + " (cuMemcpyDtoD)");
        }
        freeArgument(i);
        buffers[i] = target;
        reservations[i] = reservation;
        moved = true;
    }
    if (moved)
        encodeTensorMaps();
}

bool WorkerRuntime::Impl::anyGuarded() const {
    for (const Reservation& r : reservations) {
        if (r.base != 0)
            return true;
    }
    return false;
}

std::vector<worker::BufferExtent> WorkerRuntime::Impl::extents() const {
    std::vector<worker::BufferExtent> out;
    if (!planner)
        return out;
    const auto& args = arguments();
    for (std::size_t i = 0; i < args.size() && i < buffers.size(); ++i) {
        if (!args[i].isVector() || buffers[i] == 0)
            continue;
        worker::BufferExtent e;
        e.argument = args[i].index;
        e.name = args[i].name;
        e.address = buffers[i];
        e.bytes = args[i].bytes();
        e.elements = args[i].count;
        e.guarded = i < reservations.size() && reservations[i].base != 0;
        out.push_back(std::move(e));
    }
    return out;
}

} // namespace tilescope::cuda
