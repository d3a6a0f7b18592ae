// The gate's decoder: the reader of @zxing/browser limited to the formats Berth's tickets use
// (QR, Code 128, Aztec). The page hands it one frame at a time (decodeFromCanvas); its own
// camera loop is not used. Built into one file by `npm run build` (see README.md).
import { BrowserMultiFormatReader } from "@zxing/browser";
import { BarcodeFormat, DecodeHintType } from "@zxing/library";

export function gateReader() {
  const hints = new Map();
  hints.set(DecodeHintType.POSSIBLE_FORMATS, [BarcodeFormat.QR_CODE, BarcodeFormat.CODE_128, BarcodeFormat.AZTEC]);
  return new BrowserMultiFormatReader(hints);
}
