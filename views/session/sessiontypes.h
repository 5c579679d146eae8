#pragma once

// Value types the session views share and send through queued signals: the immutable results
// snapshot (models/resultssnapshot.h) and the run log's entries, with their Qt metatype declarations.

#include "models/resultssnapshot.h"

#include "model/records.h"
#include "tuner/tuningsession.h"

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

namespace tilescope::views {

/// One line of a run log.
struct RunLogEntry {
    enum class Kind : std::uint8_t {
        Note,          ///< what the run does: started, resumed, finished, a backend's note
        Error,         ///< the run failed, or a backend reported an error
        CompileError,  ///< a config did not compile; `details` holds NVRTC's log
        ConfigFailure, ///< a config crashed, timed out, gave a wrong result or failed to launch
    };
    Kind kind = Kind::Note;
    QString text;       ///< one line for people
    QString configJson; ///< the config it is about (compact JSON), "" none
    QString details;    ///< the compile log, or the full message ("" none)
};

} // namespace tilescope::views

Q_DECLARE_METATYPE(tilescope::views::RunLogEntry)
Q_DECLARE_METATYPE(tilescope::SessionProgress)
Q_DECLARE_METATYPE(tilescope::SessionSummary)
