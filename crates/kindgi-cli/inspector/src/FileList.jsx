import { useEffect, useRef, useState } from 'react';
import * as pdfjs from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';
import { fileBytes } from './api.js';

pdfjs.GlobalWorkerOptions.workerSrc = workerUrl;

/** Every file value (`type: "kindgi.file"`) in `value`. */
export function filesIn(value, found = []) {
  if (Array.isArray(value)) value.forEach((v) => filesIn(v, found));
  else if (value && typeof value === 'object') {
    if (value.type === 'kindgi.file' && value.artifactId) found.push(value);
    else Object.values(value).forEach((v) => filesIn(v, found));
  }
  return found;
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function PdfPreview({ bytes }) {
  const canvas = useRef(null);
  const [problem, setProblem] = useState(null);
  useEffect(() => {
    let task;
    let cancelled = false;
    (async () => {
      try {
        task = pdfjs.getDocument({ data: new Uint8Array(bytes.slice(0)), isEvalSupported: false });
        const doc = await task.promise;
        const page = await doc.getPage(1);
        const viewport = page.getViewport({ scale: 1 });
        const el = canvas.current;
        if (cancelled || !el) return;
        el.width = viewport.width;
        el.height = viewport.height;
        await page.render({ canvasContext: el.getContext('2d'), viewport, canvas: el }).promise;
        if (!cancelled) el.dataset.rendered = 'true';
      } catch (e) {
        if (!cancelled) setProblem(e.message);
      }
    })();
    return () => {
      cancelled = true;
      task?.destroy();
    };
  }, [bytes]);
  return problem ? <p className="error">Cannot render the PDF: {problem}</p> : <canvas ref={canvas} className="pdf" />;
}

function Preview({ file, bytes }) {
  const [url, setUrl] = useState(null);
  useEffect(() => {
    const blobUrl = URL.createObjectURL(new Blob([bytes], { type: file.contentType }));
    setUrl(blobUrl);
    return () => URL.revokeObjectURL(blobUrl);
  }, [bytes, file.contentType]);
  const type = file.contentType || '';
  return (
    <div className="preview">
      {type.startsWith('image/') && url && <img src={url} alt={file.name || file.artifactId} />}
      {type === 'application/pdf' && <PdfPreview bytes={bytes} />}
      {(type.startsWith('text/') || type.includes('json')) && <pre>{new TextDecoder().decode(bytes)}</pre>}
      {url && (
        <a href={url} download={file.name || file.artifactId} className="download">
          download
        </a>
      )}
    </div>
  );
}

function FileCard({ file, runId, tenantId }) {
  const [bytes, setBytes] = useState(null);
  const [problem, setProblem] = useState(null);
  useEffect(() => {
    fileBytes(file.artifactId, runId, tenantId)
      .then(setBytes)
      .catch((e) => setProblem(e.message));
  }, [file.artifactId, runId, tenantId]);
  return (
    <div className="file" data-artifact={file.artifactId}>
      <p>
        <strong>{file.name || file.artifactId}</strong> <span className="badge">{file.contentType}</span>{' '}
        <span>{size(file.size)}</span>
        {file.pages != null && <span> · {file.pages} page{file.pages === 1 ? '' : 's'}</span>}
      </p>
      <p className="muted">
        sha256 <code>{file.sha256}</code>
      </p>
      {file.notShown && <p className="muted">not shown to a model: {file.notShown}</p>}
      {problem && <p className="error">{problem}</p>}
      {bytes && <Preview file={file} bytes={bytes} />}
    </div>
  );
}

/** The files a call stored, each with its checked facts and a preview. */
export default function FileList({ files, runId, tenantId }) {
  if (!files.length) return null;
  return (
    <div className="files">
      <h4>Files</h4>
      {files.map((f) => (
        <FileCard key={f.artifactId} file={f} runId={runId} tenantId={tenantId} />
      ))}
    </div>
  );
}
