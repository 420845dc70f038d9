// Keepalive: a real IncAgent notices a manager that stops answering without closing its
// connection (here: a real inc-manager process under SIGSTOP) by its HTTP/2 keepalive pings,
// on by default (AgentOptions::keepalive, incd's manager.keepalive_ms), and registers again once
// the manager answers. Without pings the same stop goes unnoticed: the heartbeats only fill
// socket buffers.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "tests/unit/manager/service/harness.h"
#include "tests/unit/manager/service/real_agent.h"

namespace epic::manager::service::testing {
namespace {

// inc-manager as a child process on a unix socket; killed and reaped by the destructor.
class ManagerProcess {
 public:
  explicit ManagerProcess(const std::string& listen) {
    pid_ = fork();
    if (pid_ == 0) {
      execl(MANAGER_PATH, MANAGER_PATH, "--listen", listen.c_str(), "--no-state", "--log-level",
            "error", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~ManagerProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGCONT);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  ManagerProcess(const ManagerProcess&) = delete;
  ManagerProcess& operator=(const ManagerProcess&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

bool eventually(const std::function<bool()>& what, std::chrono::milliseconds within) {
  const auto end = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < end) {
    if (what()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return what();
}

agent::AgentOptions agent_options(const std::string& address, std::chrono::milliseconds keepalive) {
  agent::AgentOptions ao;
  ao.address = address;
  ao.keepalive = keepalive;
  ao.reconnect_initial = 100ms;
  ao.reconnect_max = 500ms;
  return ao;
}

TEST(KeepaliveTest, IsOnByDefault) { EXPECT_GT(agent::AgentOptions{}.keepalive.count(), 0); }

// A real inc-manager and a real IncAgent registered with it.
class StoppedManager : public ::testing::Test {
 protected:
  // Starts both with the agent's `keepalive`, waits for the registration, then SIGSTOPs the
  // manager.
  void start_then_stop(std::chrono::milliseconds keepalive) {
    const std::string listen = "unix:" + dir_.path() + "/manager.sock";
    manager_ = std::make_unique<ManagerProcess>(listen);
    ASSERT_GT(manager_->pid(), 0);
    agent_ = std::make_unique<RealAgent>(agent_options(listen, keepalive));
    ASSERT_EQ(agent_->start_error(), "");
    ASSERT_TRUE(eventually([&] { return counters().connected.load() == 1; }, 10s))
        << "never registered";
    ASSERT_EQ(kill(manager_->pid(), SIGSTOP), 0);
  }
  const agent::AgentCounters& counters() const { return agent_->agent().counters(); }
  void TearDown() override {
    agent_.reset();  // before the manager
    manager_.reset();
  }

  TempDir dir_;
  std::unique_ptr<ManagerProcess> manager_;
  std::unique_ptr<RealAgent> agent_;
};

TEST_F(StoppedManager, AnAgentPingingEverySecondNoticesAndRegistersAgain) {
  start_then_stop(1000ms);
  // A ping every second, unanswered for a second: the stream ends within a few seconds.
  EXPECT_TRUE(eventually([&] { return counters().connected.load() == 0; }, 6s))
      << "the agent did not notice the stopped manager";
  ASSERT_EQ(kill(manager_->pid(), SIGCONT), 0);
  EXPECT_TRUE(eventually(
      [&] { return counters().connected.load() == 1 && counters().registrations.load() >= 2; },
      10s))
      << "the agent did not register again";
}

TEST_F(StoppedManager, WithoutPingsItGoesUnnoticed) {
  start_then_stop(0ms);
  std::this_thread::sleep_for(4s);
  EXPECT_EQ(counters().connected.load(), 1u)
      << "noticed without pings: this test no longer shows why keepalives are on by default";
}

}  // namespace
}  // namespace epic::manager::service::testing
