export { NetProxyError } from './errors.js';
export {
  type CutMode,
  LinkProxy,
  type LinkProxyOptions,
  type LinkProxyStats,
  type LinkTarget,
} from './link-proxy.js';
export {
  formatPeers,
  type MeshLinkStats,
  type MeshMember,
  type PeerAddress,
  ProxyMesh,
  type ProxyMeshOptions,
} from './proxy-mesh.js';
