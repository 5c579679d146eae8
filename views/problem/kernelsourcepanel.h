#pragma once

// The Kernel Source panel: the open problem's kernel file (its name and folder above, the source
// highlighted below, or why it could not be read), or a note on how to open a problem. Follows
// the ProblemDocument.

#include <QStackedWidget>

class QLabel;

namespace tilescope::views {

class ProblemDocument;
class SourceView;

class KernelSourcePanel : public QStackedWidget {
    Q_OBJECT
public:
    KernelSourcePanel(ProblemDocument* document, QWidget* parent = nullptr);

    SourceView* sourceView() const { return m_sourceView; }

private:
    void onProblemChanged();

    ProblemDocument* m_document;
    SourceView* m_sourceView = nullptr;
    QLabel* m_header = nullptr;
};

} // namespace tilescope::views
