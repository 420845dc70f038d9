#include "agent/client/manager_stream.h"

#include <boost/asio/post.hpp>

namespace epic::agent {

ManagerStream::ManagerStream(std::shared_ptr<grpc::Channel> channel, boost::asio::io_context& io,
                             Handlers handlers)
    : channel_(std::move(channel)),
      stub_(inc::v1::IncAgentControl::NewStub(channel_)),
      io_(io),
      handlers_(std::move(handlers)) {}

std::shared_ptr<ManagerStream> ManagerStream::open(std::shared_ptr<grpc::Channel> channel,
                                                   boost::asio::io_context& io, Handlers handlers,
                                                   inc::v1::AgentMessage first) {
  std::shared_ptr<ManagerStream> s(new ManagerStream(std::move(channel), io, std::move(handlers)));
  s->self_ = s;
  s->stub_->async()->Connect(&s->ctx_, s.get());
  // The hold keeps the call open for writes started outside reactions (heartbeats, answers)
  // until the read side ends; without it OnDone could race a later StartWrite.
  s->AddHold();
  s->StartRead(&s->in_);
  s->send(std::move(first));
  s->StartCall();
  return s;
}

void ManagerStream::send(inc::v1::AgentMessage m) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ending_) return;
  out_.push_back(std::move(m));
  if (!writing_) {
    writing_ = true;
    StartWrite(&out_.front());
  }
}

void ManagerStream::end_writes() {
  if (ending_) return;
  ending_ = true;
  RemoveHold();
}

void ManagerStream::OnReadDone(bool ok) {
  if (!ok) {  // the manager ended the stream, or the connection is gone
    std::lock_guard<std::mutex> lock(mu_);
    end_writes();
    return;
  }
  boost::asio::post(io_,
                    [h = handlers_.on_message, m = std::move(in_)]() mutable { h(std::move(m)); });
  in_.Clear();
  StartRead(&in_);
}

void ManagerStream::OnWriteDone(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  out_.pop_front();
  if (!ok) {
    out_.clear();
    writing_ = false;
    end_writes();
    ctx_.TryCancel();  // a broken write side: end the read side too
    return;
  }
  if (!out_.empty() && !ending_) {
    StartWrite(&out_.front());
  } else {
    writing_ = false;
  }
}

void ManagerStream::OnDone(const grpc::Status& s) {
  boost::asio::post(io_, [h = handlers_.on_done, s] { h(s); });
  std::shared_ptr<ManagerStream> keep = std::move(self_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  done_cv_.notify_all();
}

void ManagerStream::wait_done() {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return done_; });
}

}  // namespace epic::agent
