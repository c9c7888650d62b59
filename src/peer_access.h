// Whether one device can reach another's memory: cuDeviceCanAccessPeer's answer, which
// cuCtxEnablePeerAccess must agree with.
#pragma once

namespace xcuda::api {

bool can_access_peer(int device, int peer);

}  // namespace xcuda::api
