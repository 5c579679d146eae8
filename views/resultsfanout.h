#pragma once

// The results on screen, fanned out: each snapshot of the session controller (a run as it goes,
// or a recording) goes to the heatmap, the scatter plot, the results table, the cross-GPU and
// compare views and the details; the heatmap's header and the status line say what the results
// are (or, without any, how to get some).

#include "session/sessiontypes.h"

#include <QObject>
#include <QString>

#include <functional>
#include <string>
#include <vector>

class QAction;
class QLabel;
class QStackedWidget;
class QWidget;

namespace tilescope::views {

class CompareView;
class ConfigDetailsPanel;
class CrossGpuView;
class HeatmapWidget;
class ProblemDocument;
class ResultsView;
class ScatterWidget;
class SessionController;

/// Hands each snapshot to the views and says what the results are; see the top of this file.
class ResultsFanOut : public QObject {
    Q_OBJECT
public:
    /// The views the results go to.
    struct Views {
        HeatmapWidget* heatmap = nullptr;
        ScatterWidget* scatter = nullptr;
        ResultsView* table = nullptr;
        CrossGpuView* crossGpu = nullptr;
        CompareView* compare = nullptr;
        ConfigDetailsPanel* details = nullptr;
    };
    /// Where the results on screen came from.
    struct Origin {
        bool demo = false;     ///< the embedded demo recording
        QString recordingPath; ///< "" none (a run's results)
    };

    /// `document` is the problem the details explain the results with; `origin` says where they came
    /// from; `runAction`'s shortcut is named while there are no results.
    ResultsFanOut(SessionController* session, ProblemDocument* document, Views views, std::function<Origin()> origin,
                  const QAction* runAction, QWidget* parent);

    /// The heatmap under a header that says what the results are, or a note while there are none.
    QWidget* heatmapPane() const;
    /// The scatter plot, or a note while there are no results.
    QWidget* scatterPane() const;
    /// The results in a few words, for the status bar.
    QLabel* statusLabel() const { return m_status; }

    /// A new snapshot (null: none) to every view; a new kind of results (other parameters) also
    /// re-picks the heatmap's axes and sorts the table winners first.
    void show(ResultsSnapshot results);
    /// The results on screen (never null).
    ResultsSnapshot results() const { return m_results; }
    /// The details' problem, shape, arch and objective, after the problem, its shape or the session changed.
    void updateDetailsContext();
    /// The results table's snapshot and columns: the session's, or before any session the open
    /// problem's parameters and objective (after the problem changed, too).
    void showTable();
    /// The header above the heatmap and the status line, after the results or their origin changed.
    void updateHeader();
    /// Compares the results on screen with the recording at `path` (Compare view).
    void compareWith(const QString& path);

private:
    QString compareLabel() const; // the results on screen, for the Compare view: "NVIDIA H200 (sgemm.db)"

    SessionController* m_session;
    ProblemDocument* m_document;
    Views m_views;
    std::function<Origin()> m_origin;
    const QAction* m_runAction;
    QLabel* m_header;
    QLabel* m_verdict; ///< the session's verdict above the heatmap (hidden when it has none)
    QLabel* m_heatmapEmpty;
    QStackedWidget* m_heatmapStack; // page 0: the note; page 1: the header above the heatmap
    QStackedWidget* m_scatterStack; // page 0: a note; page 1: the plot
    QLabel* m_status;
    ResultsSnapshot m_results;
    std::vector<std::string> m_parameters; // of the results on screen: a change re-picks the heatmap's axes
};

} // namespace tilescope::views
