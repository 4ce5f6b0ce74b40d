/**
 * aws4fetch's request signer, re-exported so that `aws_kms.ts` can load it by a
 * computed specifier, only when a key is wrapped or unwrapped.
 *
 * @module
 */
export { AwsV4Signer } from "aws4fetch";
