import { fileTypeFromBuffer } from 'file-type';
import { parseBuffer } from 'music-metadata';
import { HangarError } from '@hangar/platform';

export interface AudioFile {
  mediaType: string;
  /** The extension its type has (`mp3`, `wav`, `webm`): what names it to a provider. */
  extension: string;
  /** Its length read from the file itself; null when the file does not say and cannot be scanned. */
  durationSeconds: number | null;
}

// Browsers' MediaRecorder writes WebM and MP4 containers, which signatures name as video.
const AUDIO_CONTAINERS = new Set(['video/webm', 'video/mp4']);

/**
 * The length of a WAV file's samples as they are (data bytes over the byte rate), whatever its
 * headers claim elsewhere (a `fact` chunk may say anything); null when its chunks do not hold.
 */
function wavSeconds(bytes: Buffer): number | null {
  let byteRate: number | undefined;
  for (let offset = 12; offset + 8 <= bytes.length;) {
    const id = bytes.toString('latin1', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ' && offset + 16 <= bytes.length) byteRate = bytes.readUInt32LE(offset + 16);
    if (id === 'data') return byteRate ? Math.min(size, bytes.length - offset - 8) / byteRate : null;
    offset += 8 + size + (size % 2);
  }
  return null;
}

/**
 * What an uploaded audio file is, decided by its signature (the library the attachment service
 * decides types with), and how long it plays (read by music-metadata, which scans an MP3 without a
 * length header frame by frame; for WAV, the longer of that and its data's own length). Bytes that
 * are no audio are refused with 415.
 */
export async function readAudioFile(bytes: Buffer): Promise<AudioFile> {
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !(type.mime.startsWith('audio/') || AUDIO_CONTAINERS.has(type.mime)))
    throw new HangarError('unsupportedMediaType', `the file is not audio (its signature says ${type?.mime ?? 'nothing known'})`);
  let read: number | null = null;
  try {
    const { format } = await parseBuffer(
      new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      { mimeType: type.mime },
      { duration: true, skipCovers: true },
    );
    read = typeof format.duration === 'number' && Number.isFinite(format.duration) ? format.duration : null;
  } catch {
    read = null;
  }
  const samples = type.ext === 'wav' ? wavSeconds(bytes) : null;
  const known = [read, samples].filter((seconds): seconds is number => seconds !== null);
  return { mediaType: type.mime, extension: type.ext, durationSeconds: known.length ? Math.max(...known) : null };
}
