// Driver API handles are raw pointers to runtime objects. Before trusting one, the API layer
// asks the registry whether it names a live object: a stale or garbage handle then becomes
// CUDA_ERROR_INVALID_HANDLE instead of a crash.
#pragma once

#include <mutex>
#include <unordered_set>

namespace xcuda::runtime {

template <class Object>
class HandleRegistry {
 public:
  void add(Object* object) {
    std::lock_guard lock(mutex_);
    live_.insert(object);
  }
  void remove(Object* object) {
    std::lock_guard lock(mutex_);
    live_.erase(object);
  }
  bool contains(const void* handle) const {
    std::lock_guard lock(mutex_);
    return live_.count(static_cast<Object*>(const_cast<void*>(handle))) != 0;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<Object*> live_;
};

}  // namespace xcuda::runtime
