#include "manager/service/agent_stream.h"

#include <boost/asio/post.hpp>

namespace epic::manager::service {

void AgentLink::send(const pb::ManagerMessage& message) {
  std::lock_guard lock(mu_);
  if (stream_) stream_->enqueue(message);
}

void AgentLink::close(const grpc::Status& status) {
  std::lock_guard lock(mu_);
  if (stream_) stream_->finish(status);
}

namespace {

std::shared_ptr<AgentLink> make_link(const grpc::CallbackServerContext& context,
                                     Authentication auth) {
  std::string why;
  std::optional<Caller> caller = identify(context, auth, why);
  return std::make_shared<AgentLink>(context.peer(), std::move(caller), std::move(why));
}

}  // namespace

AgentStream::AgentStream(grpc::CallbackServerContext* context, Authentication auth,
                         boost::asio::io_context& io, Controller& controller, Clock clock)
    : io_(io), controller_(controller), clock_(std::move(clock)), link_(make_link(*context, auth)) {
  link_->stream_ = this;
  boost::asio::post(io_, [&c = controller_, link = link_] { c.agent_opened(link); });
  StartRead(&in_);
}

void AgentStream::OnReadDone(bool ok) {
  if (!ok) {
    // The agent half-closed or the call broke: end our side too.
    boost::asio::post(
        io_, [&c = controller_, link = link_, clock = clock_] { c.agent_closed(link, clock()); });
    finish(grpc::Status::OK);
    return;
  }
  boost::asio::post(io_, [&c = controller_, link = link_, clock = clock_, m = std::move(in_)] {
    c.agent_message(link, m, clock());
  });
  in_.Clear();
  StartRead(&in_);
}

void AgentStream::enqueue(const pb::ManagerMessage& message) {
  const pb::ManagerMessage* start = nullptr;
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    out_.push_back(message);
    if (!writing_) {
      writing_ = true;
      start = &out_.front();
    }
  }
  if (start) StartWrite(start);
}

void AgentStream::OnWriteDone(bool ok) {
  const pb::ManagerMessage* next = nullptr;
  {
    std::lock_guard lock(mu_);
    out_.pop_front();
    if (ok && !finished_ && !out_.empty()) {
      next = &out_.front();
    } else {
      writing_ = false;
    }
  }
  if (next) StartWrite(next);
}

void AgentStream::finish(const grpc::Status& status) {
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    finished_ = true;
  }
  Finish(status);
}

void AgentStream::OnDone() {
  {
    std::lock_guard lock(link_->mu_);
    link_->stream_ = nullptr;
  }
  boost::asio::post(
      io_, [&c = controller_, link = link_, clock = clock_] { c.agent_closed(link, clock()); });
  delete this;
}

}  // namespace epic::manager::service
