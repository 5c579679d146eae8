#include "measure/cuda/workerdepot.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>

extern char** environ;

namespace tilescope {

namespace {

using Clock = std::chrono::steady_clock;

// A pipe end moved to a descriptor >= 10, close-on-exec: the spawn's dup2 to 3 and 4 then always
// copies (dup2(3, 3) would keep close-on-exec and the worker would never see it).
int highFd(int fd) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    ::close(fd);
    return moved;
}

void closeAll(std::initializer_list<int> fds) {
    for (const int fd : fds)
        if (fd >= 0)
            ::close(fd);
}

void closeProcessFds(WorkerProcess& p) {
    closeAll({p.in, p.out, p.err});
    p.in = p.out = p.err = -1;
}

bool socketAddress(const std::string& path, sockaddr_un& address) {
    address = {};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof address.sun_path)
        return false;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    return true;
}

// The depot's answer: the worker's pid (-1: none) and, with a worker, its three descriptors.
bool sendWorker(int socket, const WorkerProcess* p) {
    const std::int32_t pid = p ? static_cast<std::int32_t>(p->pid) : -1;
    iovec iov{const_cast<std::int32_t*>(&pid), sizeof pid};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))] = {};
    if (p) {
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* c = CMSG_FIRSTHDR(&message);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(3 * sizeof(int));
        const int fds[3] = {p->in, p->out, p->err};
        std::memcpy(CMSG_DATA(c), fds, sizeof fds);
    }
    for (;;) {
        const ssize_t n = ::sendmsg(socket, &message, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        return n == static_cast<ssize_t>(sizeof pid);
    }
}

} // namespace

std::string startWorkerProcess(const WorkerLaunch& launch, WorkerProcess& process) {
    process = {};
    if (launch.argv.empty())
        return "no worker command";
    int toWorker[2];
    int fromWorker[2];
    int errPipe[2];
    if (::pipe(toWorker) != 0)
        return std::string("cannot make a pipe: ") + std::strerror(errno);
    if (::pipe(fromWorker) != 0) {
        closeAll({toWorker[0], toWorker[1]});
        return std::string("cannot make a pipe: ") + std::strerror(errno);
    }
    if (::pipe(errPipe) != 0) {
        closeAll({toWorker[0], toWorker[1], fromWorker[0], fromWorker[1]});
        return std::string("cannot make a pipe: ") + std::strerror(errno);
    }
    const int childIn = highFd(toWorker[0]);
    const int childOut = highFd(fromWorker[1]);
    const int childErr = highFd(errPipe[1]);
    process.in = highFd(toWorker[1]);
    process.out = highFd(fromWorker[0]);
    process.err = highFd(errPipe[0]);
    ::fcntl(process.err, F_SETFL, ::fcntl(process.err, F_GETFL) | O_NONBLOCK);

    std::vector<std::string> args = launch.argv;
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (launch.stdio) {
        posix_spawn_file_actions_adddup2(&actions, childIn, 0);
        posix_spawn_file_actions_adddup2(&actions, childOut, 1);
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, childIn, 3);
        posix_spawn_file_actions_adddup2(&actions, childOut, 4);
        posix_spawn_file_actions_adddup2(&actions, childErr, 1);
    }
    posix_spawn_file_actions_adddup2(&actions, childErr, 2);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    if (launch.ownGroup) {
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attributes, 0);
    }
    std::vector<std::string> environment;
    std::vector<char*> envp;
    char** env = environ;
    if (!launch.extraEnvironment.empty()) {
        for (char** e = environ; e && *e; ++e) {
            const std::string_view entry(*e);
            const std::string_view name = entry.substr(0, entry.find('='));
            bool replaced = false;
            for (const std::string& extra : launch.extraEnvironment)
                replaced = replaced || std::string_view(extra).substr(0, extra.find('=')) == name;
            if (!replaced)
                environment.emplace_back(entry);
        }
        environment.insert(environment.end(), launch.extraEnvironment.begin(), launch.extraEnvironment.end());
        for (std::string& e : environment)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        env = envp.data();
    }
    pid_t pid = -1;
    const int rc = launch.stdio ? ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), env)
                                : ::posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), env);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    closeAll({childIn, childOut, childErr});
    if (rc != 0) {
        closeProcessFds(process);
        return "cannot start " + launch.argv.front() + ": " + std::strerror(rc);
    }
    process.pid = pid;
    return {};
}

struct WorkerDepot::Impl {
    std::filesystem::path worker;
    std::filesystem::path folder;
    std::string socket;
    int listenFd = -1;
    int wake[2] = {-1, -1};
    std::map<int, WorkerProcess> spares; // by device: started, not yet adopted
    std::map<pid_t, int> adopted;        // handed to a tune, still running: pid -> device
    std::vector<pid_t> started;          // every worker started, to reap at the end
    std::atomic<int> handed{0};
    std::thread thread;

    void startSpare(int device) {
        WorkerProcess p;
        WorkerLaunch launch;
        launch.argv = {worker.string(), "--device", std::to_string(device), "--in", "3", "--out", "4"};
        if (startWorkerProcess(launch, p).empty()) {
            spares[device] = p;
            started.push_back(p.pid);
        }
    }

    void serve(int connection) {
        std::int32_t device = -1;
        pollfd p{connection, POLLIN, 0};
        if (::poll(&p, 1, 2000) <= 0 ||
            ::recv(connection, &device, sizeof device, MSG_WAITALL) != static_cast<ssize_t>(sizeof device) ||
            device < 0)
            return;
        if (spares.find(device) == spares.end())
            startSpare(device); // a device the script's backend did not name, or a restart
        const auto spare = spares.find(device);
        if (spare == spares.end()) {
            sendWorker(connection, nullptr);
            return;
        }
        ++handed; // before the tune can hear of it
        if (!sendWorker(connection, &spare->second)) {
            --handed;
            return; // the tune went away: the spare stays for the next
        }
        adopted[spare->second.pid] = device;
        closeProcessFds(spare->second);
        spares.erase(spare);
    }

    // Reaps the adopted workers that ended; a device none of whose workers runs gets its next spare.
    void reapAdopted() {
        std::vector<int> freed;
        for (auto it = adopted.begin(); it != adopted.end();) {
            int status = 0;
            if (::waitpid(it->first, &status, WNOHANG) == it->first) {
                freed.push_back(it->second);
                it = adopted.erase(it);
            } else {
                ++it;
            }
        }
        for (const int device : freed) {
            const bool busy =
                std::any_of(adopted.begin(), adopted.end(), [&](const auto& entry) { return entry.second == device; });
            if (!busy && spares.find(device) == spares.end())
                startSpare(device);
        }
    }

    void run() {
        for (;;) {
            pollfd fds[2] = {{listenFd, POLLIN, 0}, {wake[0], POLLIN, 0}};
            const int ready = ::poll(fds, 2, 100);
            if (ready > 0 && (fds[1].revents & (POLLIN | POLLHUP)))
                return;
            if (ready > 0 && (fds[0].revents & POLLIN)) {
                const int connection = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
                if (connection >= 0) {
                    serve(connection);
                    ::close(connection);
                }
            }
            reapAdopted();
        }
    }
};

WorkerDepot::WorkerDepot(std::filesystem::path worker, const std::vector<int>& devices)
    : m_impl(new Impl) {
    Impl& d = *m_impl;
    d.worker = std::move(worker);
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / "tilescope-depot-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
        throw std::runtime_error(std::string("cannot make a folder for the worker depot: ") + std::strerror(errno));
    d.folder = pattern;
    d.socket = (d.folder / "workers").string();
    sockaddr_un address{};
    d.listenFd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = d.listenFd >= 0 && socketAddress(d.socket, address) &&
                    ::bind(d.listenFd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
                    ::listen(d.listenFd, 8) == 0 && ::pipe2(d.wake, O_CLOEXEC) == 0;
    if (!ok) {
        const std::string why = std::strerror(errno);
        closeAll({d.listenFd, d.wake[0], d.wake[1]});
        std::filesystem::remove_all(d.folder, ec);
        throw std::runtime_error("cannot make the worker depot's socket " + d.socket + ": " + why);
    }
    for (const int device : devices)
        d.startSpare(device);
    d.thread = std::thread([&d] { d.run(); });
}

WorkerDepot::~WorkerDepot() {
    Impl& d = *m_impl;
    if (d.thread.joinable()) {
        const char stop = 1;
        [[maybe_unused]] const ssize_t n = ::write(d.wake[1], &stop, 1);
        d.thread.join();
    }
    closeAll({d.listenFd, d.wake[0], d.wake[1]});
    std::error_code ec;
    std::filesystem::remove_all(d.folder, ec);
    // A spare ends when its requests end; one still starting ends once it has said hello.
    for (auto& [device, p] : d.spares)
        closeProcessFds(p);
    const auto until = Clock::now() + std::chrono::seconds(5);
    for (const pid_t pid : d.started) {
        int status = 0;
        pid_t got = 0;
        while ((got = ::waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (got == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
        }
    }
}

std::string WorkerDepot::socketPath() const {
    return m_impl->socket;
}

int WorkerDepot::adopted() const {
    return m_impl->handed.load();
}

std::optional<WorkerProcess> adoptWorker(const std::string& socketPath, int device) {
    sockaddr_un address{};
    if (device < 0 || !socketAddress(socketPath, address))
        return std::nullopt;
    const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return std::nullopt;
    std::optional<WorkerProcess> got;
    const std::int32_t ordinal = device;
    if (::connect(s, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
        ::send(s, &ordinal, sizeof ordinal, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof ordinal)) {
        pollfd p{s, POLLIN, 0};
        while (::poll(&p, 1, 10000) < 0 && errno == EINTR) {
        }
        std::int32_t pid = -1;
        iovec iov{&pid, sizeof pid};
        msghdr message{};
        message.msg_iov = &iov;
        message.msg_iovlen = 1;
        alignas(cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))] = {};
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        ssize_t n = -1;
        if (p.revents & POLLIN)
            while ((n = ::recvmsg(s, &message, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
            }
        const cmsghdr* c = n == static_cast<ssize_t>(sizeof pid) ? CMSG_FIRSTHDR(&message) : nullptr;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(3 * sizeof(int))) {
            int fds[3];
            std::memcpy(fds, CMSG_DATA(c), sizeof fds);
            if (pid > 0) {
                WorkerProcess w;
                w.pid = pid;
                w.in = fds[0];
                w.out = fds[1];
                w.err = fds[2];
                got = w;
            } else {
                closeAll({fds[0], fds[1], fds[2]});
            }
        }
    }
    ::close(s);
    return got;
}

} // namespace tilescope
