// turnstile-kit: the conformance protocol (conformance/PROTOCOL.md) for JavaScript and
// TypeScript agent loops. An adapter maps its loop's hooks, tools, stream function and events
// onto a Session; the kit does hello, sessions, calls, deliveries, virtual time, idle
// detection, stop and shutdown. See README.md.

export { ALL_HOOKS, FEATURES, Kit, PROTOCOL, PROTOCOLS, V2_FEATURES, errorText, serve } from "./src/kit.mjs";
export { CallError, DeliveryError, SessionStopped, Session, STOPPED, Stream, StreamError, ToolError } from "./src/session.mjs";
export { clock, installVirtualTime, now } from "./src/vtime.mjs";
export { AdapterError, ProtocolError, Shutdown } from "./src/wire.mjs";
