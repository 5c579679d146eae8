#pragma once

// The tune use case across the ranks of an MPI job (measure/mpi): rank 0 runs the session on a
// backend that measures on every rank's slots, the other ranks serve it. Built only where Open MPI
// is found, as a library of its own (tilescope-jobs-mpi) that the programs offering `--mpi` link;
// such a program hands joinMpiJob to TuneRequest::joinCluster.

#include "jobs/tune.h"

#include <memory>

namespace tilescope {

/// Joins the MPI job this process was started in (a job of one rank outside mpirun): on rank 0 the
/// cluster backend is made at once; each rank measures on its share of its node's GPUs of `spec`
/// (or TuneRequest::replaySlots replays; an analysis rank only compiles) and compiles on its share
/// of the node's cores.
std::unique_ptr<TuneCluster> joinMpiJob(const TuneRequest& request, const BackendSpec& spec, const TuneEvents& events);

} // namespace tilescope
