#include "problem/kernelsourcepanel.h"

#include "common/emptystate.h"
#include "problem/problemdocument.h"
#include "problem/sourceview.h"

#include "spec/tuningproblem.h"

#include <QDir>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QVBoxLayout>

namespace tilescope::views {

KernelSourcePanel::KernelSourcePanel(ProblemDocument* document, QWidget* parent)
    : QStackedWidget(parent)
    , m_document(document) {
    m_sourceView = new SourceView(this);
    m_sourceView->setObjectName(QStringLiteral("kernelSource"));
    m_header = new QLabel(this);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setTextFormat(Qt::RichText);
    m_header->setContentsMargins(6, 4, 6, 4);
    auto* kernelPage = new QWidget(this);
    auto* kernelLayout = new QVBoxLayout(kernelPage);
    kernelLayout->setContentsMargins(0, 0, 0, 0);
    kernelLayout->setSpacing(0);
    kernelLayout->addWidget(m_header);
    kernelLayout->addWidget(m_sourceView, 1);
    addWidget(emptyStateLabel(
        tr("<h3>No tuning problem open</h3>"
           "<p>Open a T1 problem file with <b>File ▸ Open…</b> (%1), or drop a <tt>.json</tt> file here.</p>")
            .arg(shortcutText(QKeySequence(QKeySequence::Open))),
        this));
    addWidget(kernelPage);
    connect(m_document, &ProblemDocument::problemChanged, this, &KernelSourcePanel::onProblemChanged);
}

void KernelSourcePanel::onProblemChanged() {
    const auto problem = m_document->problem();
    setCurrentIndex(problem ? 1 : 0);
    if (!problem)
        return;
    if (m_document->kernelError().isEmpty()) {
        m_sourceView->setSource(m_document->kernelSource(), problem->isCuda() || problem->language == "C++");
    } else {
        m_sourceView->setSource(m_document->kernelError(), false);
    }
    const QFileInfo kernel(m_document->kernelPath());
    const QString where =
        m_document->origin() == ProblemDocument::Origin::Example
            ? tr("embedded example, extracted to %1").arg(QDir::toNativeSeparators(kernel.absolutePath()))
            : QDir::toNativeSeparators(kernel.absolutePath());
    m_header->setText(tr("<b>%1</b>&nbsp;&nbsp;<span style='color:%2'>%3</span>")
                          .arg(kernel.fileName().toHtmlEscaped(), palette().color(QPalette::PlaceholderText).name(),
                               where.toHtmlEscaped()));
}

} // namespace tilescope::views
