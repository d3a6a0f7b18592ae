// The gate's decoder: ZXing-C++ built to WebAssembly (zxing-wasm), limited to the formats
// Berth's tickets use (QR, Code 128, Aztec). The page hands it one camera frame at a time.
// Built into one file, with the WebAssembly file beside it, by `npm run build` (README.md).
import { prepareZXingModule, readBarcodes } from "zxing-wasm/reader";

const OPTIONS = { formats: ["QRCode", "Code128", "Aztec"], maxNumberOfSymbols: 1 };

// `wasmUrl`: where Berth serves zxing_reader.wasm (the package would fetch it from a CDN).
export function gateReader(wasmUrl) {
  prepareZXingModule({
    overrides: { locateFile: (path, prefix) => (path.endsWith(".wasm") ? wasmUrl : prefix + path) },
  });
  return {
    // The code in `frame` (an ImageData), or null when it shows none.
    async read(frame) {
      const [found] = await readBarcodes(frame, OPTIONS);
      return found && found.isValid ? found.text : null;
    },
  };
}
