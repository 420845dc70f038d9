#include "agent/client/inc_agent.h"

#include <spdlog/sinks/null_sink.h>

#include "agent/client/channel.h"

namespace epic::agent {

IncAgent::IncAgent(boost::asio::io_context& io, AgentOptions options, SwitchIdentity identity,
                   ActionApplier& applier, const TelemetrySource& telemetry,
                   std::shared_ptr<spdlog::logger> log)
    : io_(io),
      options_(std::move(options)),
      identity_(std::move(identity)),
      applier_(applier),
      telemetry_(telemetry),
      log_(log ? std::move(log)
               : std::make_shared<spdlog::logger>("agent",
                                                  std::make_shared<spdlog::sinks::null_sink_mt>())),
      backoff_(options_.reconnect_initial, options_.reconnect_max, options_.reconnect_jitter,
               options_.seed),
      reconnect_timer_(io),
      heartbeat_timer_(io),
      heartbeat_interval_(options_.heartbeat_interval) {}

IncAgent::~IncAgent() { stop(); }

std::string IncAgent::start() {
  if (running_) return "";
  ChannelResult r = make_channel(options_);
  if (!r.channel) return r.error;
  // One channel for the agent's life: it reconnects by itself within the backoff bounds set
  // on it, and every attempt's stream starts on it. (With a channel per attempt, ASan caught a
  // double free inside gRPC 1.51's completion-queue teardown in tests/unit/agent.)
  channel_ = std::move(r.channel);
  running_ = true;
  connect();
  return "";
}

void IncAgent::stop() {
  running_ = false;
  reconnect_timer_.cancel();
  heartbeat_timer_.cancel();
  if (stream_) {
    stream_->cancel();
    stream_->wait_done();
    stream_.reset();
  }
  ++generation_;  // the ended stream's handlers, still queued, do nothing
  registered_ = false;
  counters_.connected = 0;
}

void IncAgent::connect() {
  if (!running_) return;
  if (attempts_++ > 0) counters_.reconnects.fetch_add(1, std::memory_order_relaxed);
  std::weak_ptr<int> alive = alive_;
  const uint64_t generation = ++generation_;  // a late handler of an older stream is ignored
  ManagerStream::Handlers h;
  h.on_message = [this, alive, generation](inc::v1::ManagerMessage m) {
    if (alive.lock() && generation == generation_) on_message(std::move(m));
  };
  h.on_done = [this, alive, generation](grpc::Status s) {
    if (alive.lock() && generation == generation_) on_done(s);
  };
  log_->debug("agent: connecting to inc-manager at {}", options_.address);
  stream_ = ManagerStream::open(channel_, io_, std::move(h), make_register(identity_, applier_));
}

void IncAgent::send(inc::v1::AgentMessage m) {
  if (stream_) stream_->send(std::move(m));
}

void IncAgent::on_message(inc::v1::ManagerMessage m) {
  if (!running_) return;
  switch (m.msg_case()) {
    case inc::v1::ManagerMessage::kRegistered: {
      registered_ = true;
      counters_.connected = 1;
      counters_.registrations.fetch_add(1, std::memory_order_relaxed);
      backoff_.reset();
      const auto asked = std::chrono::milliseconds(m.registered().heartbeat_interval_ms());
      heartbeat_interval_ = options_.heartbeat_interval;
      if (asked.count() > 0 && asked < heartbeat_interval_) heartbeat_interval_ = asked;
      log_->info("agent: registered with inc-manager at {} as {} (heartbeat every {} ms)",
                 options_.address, identity_.switch_id, heartbeat_interval_.count());
      schedule_heartbeat();
      break;
    }
    case inc::v1::ManagerMessage::kResync: {
      const size_t before = applier_.table().entries().size();
      if (std::string err = applier_.resync(m.resync()); !err.empty()) {
        log_->error("agent: resync failed: {}", err);
      } else if (applier_.table().entries().size() != before) {
        log_->info("agent: resync removed {} group(s)", before - applier_.table().entries().size());
      }
      break;
    }
    case inc::v1::ManagerMessage::kAction: {
      const inc::v1::Action& a = m.action();
      inc::v1::AgentMessage answer = applier_.apply(a);
      if (answer.has_ack()) {
        counters_.actions_applied.fetch_add(1, std::memory_order_relaxed);
        log_->info("agent: action {} ({}) on group {} applied", a.action_id(),
                   inc::v1::ActionKind_Name(a.kind()), a.group_id());
      } else {
        counters_.actions_failed.fetch_add(1, std::memory_order_relaxed);
        log_->warn("agent: action {} ({}) on group {} failed: {}", a.action_id(),
                   inc::v1::ActionKind_Name(a.kind()), a.group_id(), answer.fail().reason());
      }
      send(std::move(answer));
      break;
    }
    default:
      log_->warn("agent: ignoring an empty or unknown message from inc-manager");
      break;
  }
}

void IncAgent::on_done(const grpc::Status& s) {
  heartbeat_timer_.cancel();
  stream_.reset();
  const bool was_registered = registered_;
  registered_ = false;
  counters_.connected = 0;
  if (!running_) return;
  const auto delay = backoff_.next();
  const std::string why = std::to_string(static_cast<int>(s.error_code())) + " " +
                          (s.error_message().empty() ? "stream ended" : s.error_message());
  if (was_registered) {
    log_->warn(
        "agent: lost inc-manager at {} ({}); installed groups keep serving; reconnecting "
        "in {} ms",
        options_.address, why, delay.count());
  } else {
    log_->debug("agent: cannot reach inc-manager at {} ({}); retry in {} ms", options_.address, why,
                delay.count());
  }
  reconnect_timer_.expires_after(delay);
  reconnect_timer_.async_wait(
      [this, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
        if (!ec && alive.lock()) connect();
      });
}

void IncAgent::schedule_heartbeat() {
  heartbeat_timer_.expires_after(heartbeat_interval_);
  heartbeat_timer_.async_wait(
      [this, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
        if (ec || !alive.lock() || !registered_) return;
        send(make_heartbeat(telemetry_));
        counters_.heartbeats_sent.fetch_add(1, std::memory_order_relaxed);
        schedule_heartbeat();
      });
}

}  // namespace epic::agent
