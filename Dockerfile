# One image for every role: ingest, edge, or all (see docker-compose.yml). The event is not in
# the image: mount its folder at /event (samples/ is here for `duplicast demo`).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY hub ./hub
COPY overlays ./overlays
COPY samples ./samples
RUN pip install --no-cache-dir .
ENV PYTHONUNBUFFERED=1 DUPLICAST_HOME=/app
EXPOSE 8000
ENTRYPOINT ["duplicast"]
VOLUME ["/event"]
CMD ["serve", "--config", "/event/event.toml", "--redis", "redis://redis:6379/0", "--host", "0.0.0.0"]
