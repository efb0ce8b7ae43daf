// The signing vector the Standard Webhooks reference libraries test their `sign` function against
// ("sign function works" in github.com/standard-webhooks/standard-webhooks, libraries/*; MIT
// licence, Copyright (c) 2023 Svix). Copied here so that the tests need nothing outside the
// repository: HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the secret's base64 bytes.
export const STANDARD_VECTOR = Object.freeze({
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: '1614265330',
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
})
