// Preloaded into an API process (`NODE_OPTIONS=--import …`) by the retry tests: shifts its
// Date.now so that its one-minute rate-limit windows end at SHIFTED_MINUTE_ENDS_AT (epoch ms of
// the real clock), and a 429's Retry-After is a second or two rather than up to a minute.
const endsAt = Number(process.env.SHIFTED_MINUTE_ENDS_AT);
const offset = (60_000 - (endsAt % 60_000)) % 60_000;
const realNow = Date.now;
Date.now = () => realNow() + offset;
