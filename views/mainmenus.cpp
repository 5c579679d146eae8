#include "mainmenus.h"

#include "common/manualview.h"
#include "crossgpu/crossgpuview.h"
#include "problem/kernelspecdialog.h"
#include "problem/problemdocument.h"
#include "session/runpanel.h"
#include "session/sessioncontroller.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QUndoStack>

namespace tilescope::views {

void addEditMenu(QMenuBar* bar, ProblemDocument* document, QWidget* window) {
    QMenu* editMenu = bar->addMenu(QObject::tr("&Edit"));
    QAction* undo = document->undoStack()->createUndoAction(window, QObject::tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    editMenu->addAction(undo);
    QAction* redo = document->undoStack()->createRedoAction(window, QObject::tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    editMenu->addAction(redo);
    editMenu->addSeparator();
    QAction* kernelSpec = editMenu->addAction(QObject::tr("&Kernel and Launch…"), window, [document, window]() {
        if (!document->hasProblem())
            return;
        KernelSpecDialog dialog(document, window);
        dialog.exec();
    });
    kernelSpec->setStatusTip(QObject::tr("Edit the kernel's name, file and compiler options, the launch, the shapes "
                                         "and the objective"));
}

void addRunMenu(QMenuBar* bar, const RunMenuParts& p, QWidget* window) {
    QMenu* run = bar->addMenu(QObject::tr("&Run"));
    run->addAction(p.start);
    QObject::connect(p.start, &QAction::triggered, window, [p]() {
        p.runDock->show();
        p.runDock->raise();
        p.runPanel->startRun();
    });
    p.start->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    p.start->setStatusTip(QObject::tr("Tune the problem with the Run panel's settings"));
    run->addAction(p.cancel);
    QObject::connect(p.cancel, &QAction::triggered, window, [p]() {
        p.session->cancel();
        p.crossGpu->cancel();
    });
    p.cancel->setShortcuts({QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_Period)});
    p.cancel->setStatusTip(QObject::tr("Stop the run (or the cross-GPU analysis) after the work in hand"));
    p.cancel->setEnabled(false);
    run->addSeparator();
    run->addAction(QObject::tr("Analyse Across &GPUs"), window, [p]() {
        p.crossGpuDock->show();
        p.crossGpuDock->raise();
        p.crossGpu->start();
    });
    QObject::connect(p.crossGpu, &CrossGpuView::started, window, [p]() { p.cancel->setEnabled(true); });
    QObject::connect(p.crossGpu, &CrossGpuView::finished, window,
                     [p]() { p.cancel->setEnabled(p.session->isRunning()); });
}

void addHelpMenu(QMenuBar* bar, QWidget* window) {
    QMenu* help = bar->addMenu(QObject::tr("&Help"));
    ManualView::addMenuAction(help, window);
    QAction* about = help->addAction(QObject::tr("&About Tilescope"), window, [window]() {
        QMessageBox::about(window, QObject::tr("About Tilescope"),
                           QObject::tr("<h3>Tilescope %1</h3>"
                                       "<p>A workbench for autotuning CUDA kernels: explore config spaces, run tuning "
                                       "sessions, diagnose register spilling and export the winners.</p>"
                                       "<p>Built with Qt %2.</p>")
                               .arg(QStringLiteral(TILESCOPE_VERSION), QString::fromLatin1(qVersion())));
    });
    about->setMenuRole(QAction::AboutRole);
    QAction* aboutQt = help->addAction(QObject::tr("About &Qt"), qApp, &QApplication::aboutQt);
    aboutQt->setMenuRole(QAction::AboutQtRole);
}

} // namespace tilescope::views
