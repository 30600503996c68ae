// The events module's one door: other code imports only this file.
export { encodeFeedCursor } from "./cursor.js";
export { AFTER_MESSAGE, EVENT_NOT_FOUND, type EventPage, eventsQuery, type FeedEvent, getEvent, listEvents } from "./feed.js";
export { type EventInput, recordEvent, rewriteEventBody } from "./record.js";
export { maintainEventFeed } from "./retention.js";
export { sequenceIn, sequenceMerchant } from "./sequence.js";
export { signingKeysOf } from "./signing-keys.js";
