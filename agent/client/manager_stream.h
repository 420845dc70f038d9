// ManagerStream: one IncAgentControl.Connect call (proto/inc/v1/agent.proto) on gRPC's
// callback API. gRPC runs its reactions on its own threads; every message read and the final
// status are posted onto the agent's io_context, so the agent's logic runs on one thread.
// Writes may be started from any thread; they are queued and sent one at a time, in order.
// Lifetime: open() returns a shared owner; the stream keeps itself alive until gRPC has
// finished it (OnDone), then posts on_done. cancel() ends it; wait_done() blocks until gRPC
// has finished (shutdown).
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/client_callback.h>

#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "proto/inc/v1/agent.grpc.pb.h"

namespace epic::agent {

class ManagerStream
    : public grpc::ClientBidiReactor<inc::v1::AgentMessage, inc::v1::ManagerMessage> {
 public:
  // Run on the io_context. A handler is not run once the io_context stops running.
  struct Handlers {
    std::function<void(inc::v1::ManagerMessage)> on_message;
    std::function<void(grpc::Status)> on_done;
  };

  // Starts the call and writes `first` (the Register).
  static std::shared_ptr<ManagerStream> open(std::shared_ptr<grpc::Channel> channel,
                                             boost::asio::io_context& io, Handlers handlers,
                                             inc::v1::AgentMessage first);

  void send(inc::v1::AgentMessage m);  // dropped once the stream is ending
  void cancel() { ctx_.TryCancel(); }
  void wait_done();

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& s) override;

 private:
  ManagerStream(std::shared_ptr<grpc::Channel> channel, boost::asio::io_context& io,
                Handlers handlers);
  void end_writes();  // with mu_ held

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inc::v1::IncAgentControl::Stub> stub_;
  boost::asio::io_context& io_;
  Handlers handlers_;
  grpc::ClientContext ctx_;
  inc::v1::ManagerMessage in_;
  std::shared_ptr<ManagerStream> self_;  // set from open() until OnDone

  std::mutex mu_;
  std::condition_variable done_cv_;
  std::deque<inc::v1::AgentMessage> out_;  // front is being written while writing_
  bool writing_ = false;
  bool ending_ = false;  // no more writes; the hold on the call is released
  bool done_ = false;
};

}  // namespace epic::agent
