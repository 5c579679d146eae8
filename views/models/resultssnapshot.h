#pragma once

// The results of a session as the views hold them: one immutable vector, shared between the
// thread that copies a live run's results and the GUI thread, and sent through queued signals.

#include "model/records.h"

#include <QMetaType>

#include <memory>
#include <vector>

namespace tilescope::views {

/// The results of a session as one immutable vector, in arrival order. A new snapshot is a new
/// vector (copy-on-publish); holders keep theirs alive and read it from any thread.
using ResultsSnapshot = std::shared_ptr<const std::vector<ResultRecord>>;

} // namespace tilescope::views

Q_DECLARE_METATYPE(tilescope::views::ResultsSnapshot)
Q_DECLARE_METATYPE(tilescope::ResultRecord)
