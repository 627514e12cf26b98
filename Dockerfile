# Tossup's image: the web server and the Celery worker (compose.yaml runs both; README,
# "Deploying with docker compose"). The entrypoint waits for the database and migrates first.
# `--build-arg BOTS=1` adds the embedding bot's torch and transformers (requirements-bots.txt)
# for a bot image; the default image leaves them out.
FROM python:3.11-slim
ARG BOTS=0
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 DEBUG=0 SERVESTATIC_USE_FINDERS=0
WORKDIR /app
COPY requirements.txt requirements-bots.txt ./
# The bot SDK (tossup_bot): runbot and the project's bots import its client.
COPY sdk ./sdk
RUN pip install -r requirements.txt ./sdk
# torch's CPU wheels: the default Linux wheel pulls CUDA libraries no bot here uses.
RUN if [ "$BOTS" = 1 ]; then \
      pip install --extra-index-url https://download.pytorch.org/whl/cpu -r requirements-bots.txt; \
    fi
COPY . .
# Static files are served from STATIC_ROOT (servestatic, SERVESTATIC_USE_FINDERS=0). The key is a
# throw-away: collectstatic signs nothing, and no key may be baked into the image.
RUN SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && useradd --system --uid 10001 --home-dir /app tossup \
    && mkdir -p var/media && chown -R tossup var
USER tossup
EXPOSE 8000
ENTRYPOINT ["python", "/app/docker/entrypoint.py"]
CMD ["web"]
